"""The user-facing namespace: `from verifier.lang import *` (LANG-1.3).

Exports the names upstream exports from exo's `proc`, `exo.platforms.cuda`, `.Sm80`, `.Sm90`,
`.Sm100` and `.cuda_tk` that spork-verify supports, plus `simplify`.
"""

from verifier.lang.stdlib import memories as _mem
from verifier.lang.stdlib import units as _units
from verifier.lang.stdlib.config import CudaDeviceFunction, CudaWarpConfig, CudaWarps
from verifier.lang.stdlib.cuda_tk import (
    TK_COPIES as _TK_COPIES, CudaTkRsInstrAdvice, CudaTkWarpTile, CudaTkWarpVec,
    cuda_tk_load_rs_advice, cuda_tk_store_rs_advice,
)
from verifier.lang.stdlib.cuda_tk_ops import TILE_OPS as _TK_TILE_OPS, VEC_OPS as _TK_VEC_OPS
from verifier.lang.stdlib.instrs import INSTRS as _INSTRS
from verifier.lang.stdlib.instrs_cuda import CUDA_INSTRS as _CUDA_INSTRS
from verifier.lang.stdlib.instrs_cuda import get_cuda_packed32_load_v, get_cuda_packed32_store_v
from verifier.lang.stdlib.instrs_sm90 import SM90_INSTRS as _SM90_INSTRS
from verifier.lang.stdlib.instrs_endgame import ENDGAME_SM80_INSTRS as _ENDGAME_SM80_INSTRS
from verifier.lang.stdlib.instrs_sm100 import SM100_INSTRS as _SM100_INSTRS
from verifier.lang.stdlib.sm90_tk_mma import TK_MMA_INSTRS as _TK_MMA_INSTRS
from verifier.lang.stdlib.instrs_sm90_tma import ENDGAME_TMA_INSTRS as _ENDGAME_TMA_INSTRS
from verifier.lang.stdlib.sm90_tk_mma import Sm90_TkRmemTileA, Sm90_TkRmemTileD
from verifier.lang.stdlib.memories_sm100 import Sm100_RmemMatrixD, Sm100_Tmem
from verifier.lang.parse.procs import proc, simplify
from verifier.lang.stdlib.scalars import (
    ScalarInfo, bf16, e4m3, f16, f32, f64, i8, i32, ui8, ui16,
)
from verifier.lang.parse.user_instrs import (
    AccessInfo, AtomicityInfo, InstrArgs, InstrInfo, InstrTemplate, instr,
)
from verifier.lang.rewrite.scheduling import UNSUPPORTED_REWRITES as _REWRITES
from verifier.lang.rewrite.scheduling import delete_buffer, rename, set_precision
from verifier.lang.rewrite.replace_copy import replace
from verifier.lang.rewrite.scheduling_loops import cut_loop, inline_window
from verifier.lang.rewrite.rings import set_dim_size_annotation, set_ring_guarded_by
from verifier.lang.rewrite.stmt_edits import add_loop, insert_fence, set_loop_mode
from verifier.lang.stdlib.timelines import InstrTL, QualTL, SyncTL
from verifier.lang.stdlib.endgame import (
    CudaMbarrierPreArrive, CudaRmemLinear, CudaRmemUniform, Sm80_CommitGroup,
    Sm90_TmaCommitGroup, Sm90_WgmmaCommitGroup, ring_buffer_by,
)
from verifier.lang.stdlib.units import (
    CollUnit, blockDim, clusterDim, cuda_cluster, cuda_cta_in_cluster,
    cuda_cta_in_cluster_strided, cuda_quadpair, cuda_thread, cuda_threads_strided, cuda_warp,
    cuda_warp_in_cluster, cuda_warp_in_cluster_strided, cuda_warpgroup, standalone_thread,
)
from verifier.lang.stdlib.memories import (
    DRAM, CudaBasicDeviceVisible, CudaBasicSmem, CudaClusterSync, CudaCommitGroup,
    CudaDeviceVisibleAtomicity16B, CudaDeviceVisibleLinear, CudaEvent, CudaGmemAtomicity16B,
    CudaGmemLinear, CudaGridConstant, CudaMbarrier, CudaRmem, CudaRmemPacked32,
    CudaSmemAtomicity16B, CudaSmemLinear, Sm80_RmemMatrixA, Sm80_RmemMatrixB, Sm80_RmemMatrixD,
    Sm90_get_mma_smem, Sm90_RmemMatrixA, Sm90_RmemMatrixD, Sm90_SmemSwizzled, Sm90_tensorMap,
)

# Loop modes and the loop cursor under upstream's names (exo.platforms.cuda, exo.stdlib.
# scheduling), for scripts that name them, e.g. as arguments of `set_loop_mode` (API-2)
from verifier.lang.ir.ir import CudaTasks, CudaThreads, Seq  # noqa: E402
from verifier.lang.ir.ir import Proc as Procedure  # noqa: E402  # exo's class, in annotations
from verifier.lang.ir.ir import For as ForCursor  # noqa: E402

cpu_in_order = SyncTL.cpu_in_order
cuda_in_order = SyncTL.cuda_in_order
cuda_temporal = SyncTL.cuda_temporal
cuda_stream_sync = SyncTL.cuda_stream_sync
Sm80_cp_async = SyncTL.Sm80_cp_async
Sm80_generic = SyncTL.Sm80_generic
tma_to_smem_async = SyncTL.tma_to_smem_async
tma_to_gmem_async = SyncTL.tma_to_gmem_async
wgmma_async_smem = SyncTL.wgmma_async_smem
wgmma_fence_1 = SyncTL.wgmma_fence_1
wgmma_fence_2 = SyncTL.wgmma_fence_2
wgmma_async = SyncTL.wgmma_async
cuda_generic_and_async_proxy = SyncTL.cuda_generic_and_async_proxy
tcgen05_commit = SyncTL.tcgen05_commit
tcgen05_ld = SyncTL.tcgen05_ld
tcgen05_st = SyncTL.tcgen05_st
tcgen05_before_thread_sync = SyncTL.tcgen05_before_thread_sync
tcgen05_after_thread_sync = SyncTL.tcgen05_after_thread_sync

cpu_in_order_instr = InstrTL.cpu_in_order_instr
cpu_cuda_stream_instr = InstrTL.cpu_cuda_stream_instr
cuda_in_order_instr = InstrTL.cuda_in_order_instr
wgmma_zero_instr = InstrTL.wgmma_zero_instr
Sm80_cp_async_instr = InstrTL.Sm80_cp_async_instr
tma_to_smem_async_instr = InstrTL.tma_to_smem_async_instr
tma_to_gmem_async_instr = InstrTL.tma_to_gmem_async_instr
wgmma_async_instr = InstrTL.wgmma_async_instr
tcgen05_mma_instr = InstrTL.tcgen05_mma_instr
tcgen05_cp_instr = InstrTL.tcgen05_cp_instr
tcgen05_shift_instr = InstrTL.tcgen05_shift_instr
tcgen05_ld_instr = InstrTL.tcgen05_ld_instr
tcgen05_st_instr = InstrTL.tcgen05_st_instr

globals().update(_REWRITES)
globals().update(_INSTRS)
globals().update(_CUDA_INSTRS)
globals().update(_SM90_INSTRS)
globals().update(_TK_COPIES)  # ThunderKittens (upstream's exo.platforms.cuda_tk)
globals().update(_TK_TILE_OPS)
globals().update(_TK_VEC_OPS)
globals().update(_TK_MMA_INSTRS)  # upstream's Sm90 ThunderKittens wgmma (TK-5)
globals().update(_ENDGAME_SM80_INSTRS)
globals().update(_ENDGAME_TMA_INSTRS)
Sm80_RmemMatrixD_m16n8 = Sm80_RmemMatrixD(16, 8)
globals().update(_SM100_INSTRS)

__all__ = [name for name in list(globals()) if not name.startswith("_")
           and name not in ("annotations",)]
