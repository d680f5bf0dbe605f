"""Blackwell (sm_100a) memories (specs/blackwell.md BW-1, BW-2): tensor memory and the register
tile a `tcgen05.ld` fills.

Tensor memory (TMEM) is per-CTA storage of 128 lanes x 512 columns of 32 bits, allocated in
columns by one warp with `tcgen05.alloc` and freed with `tcgen05.dealloc` (PTX ISA "Tensor
Memory Allocation and Management Instructions").
A TMEM variable `D: f32[128, N] @ Sm100_Tmem` names an allocation of N columns; the CTA owns
it (native unit cuda_cta_in_cluster), and only tcgen05 instrs and the allocator touch it.
"""

from __future__ import annotations

from verifier.lang.stdlib import units
from verifier.lang.stdlib.memories import Memory

TMEM_LANES = 128
TMEM_COLUMNS = 512

Sm100_Tmem = Memory("Sm100_Tmem", "tmem", "", "rwc", units.cuda_cta_in_cluster, False, True)
# the accumulator tile a warpgroup's tcgen05.ld.32x32b leaves in registers: warp w holds lanes
# 32w..32w+31, one row per thread (BW-2.2)
Sm100_RmemMatrixD = Memory("Sm100_RmemMatrixD", "rmem_matrix", "", "rwc", units.cuda_warpgroup,
                           False, True, packed_dims=2, bases=("CudaBasicDeviceVisible",))

SM100_MEMORIES = {"Sm100_Tmem": Sm100_Tmem, "Sm100_RmemMatrixD": Sm100_RmemMatrixD}
