"""The two Exo-GPU dialects spork-verify reads, and the names that tell them apart (DIAL-1).

Data only (the ThunderKittens rows come from the tk tables themselves). `SPORK26` is
upstream's February 2026 language (branch camspork_jit, what
spork-verify first read); `ENDGAME` its July 2026 language (branch endgame). A name in
`MARKERS` exists in one dialect only: a proc whose text uses it (or whose `@` annotation
evaluates to an endgame mechanism) is written in that dialect. Helpers that add names of one
dialect add rows here (e.g. `TK_NAMES` for the ThunderKittens ops): one table, read by
`lang/parse/dialect.py`; nothing registers itself on import.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from verifier.lang.stdlib.cuda_tk import TK_COPIES
from verifier.lang.stdlib.sm90_tk_mma import TK_MMA_INSTRS
from verifier.lang.stdlib.cuda_tk_ops import TILE_OPS, VEC_OPS

SPORK26 = "spork26"
ENDGAME = "endgame"

DIALECTS: Mapping[str, str] = MappingProxyType({
    SPORK26: "Exo-GPU of February 2026 (upstream branch camspork_jit)",
    ENDGAME: "Exo-GPU of July 2026 (upstream branch endgame)",
})

# Names only the endgame dialect has (upstream's exo, exo.platforms.cuda, .Sm80, .Sm90,
# exo.stdlib.scheduling of July 2026), with what each is.
ENDGAME_NAMES: Mapping[str, str] = MappingProxyType({
    "ring_buffer_by": "a managed ring-buffer dimension (`n @ ring_buffer_by(d)`)",
    "CudaMbarrierPreArrive": "a pre-arrived mbarrier ring (`@ CudaMbarrierPreArrive(k)`)",
    "Sm80_CommitGroup": "the cp.async commit group mechanism",
    "Sm90_TmaCommitGroup": "the TMA-store commit group mechanism",
    "Sm90_WgmmaCommitGroup": "the wgmma commit group mechanism",
    "CudaBasicCommitGroup": "the commit-group base mechanism",
    "CudaBasicDeviceBarrier": "the device-barrier base mechanism",
    "set_dim_size_annotation": "the ring-buffer scheduling rewrite",
    "set_ring_guarded_by": "the ring-buffer scheduling rewrite",
    "Sm80_mma_m16n8": "the generic Sm80 mma instruction",
    "Sm80_mma_m16n8_zero": "the generic Sm80 accumulator zeroing instruction",
    "Sm80_mma_m16n8k8_f32_tf32": "an Sm80 mma instruction",
    "Sm80_mma_m16n8k16_f32_bf16": "an Sm80 mma instruction",
    "Sm80_mma_m16n8k16_f32_f16": "an Sm80 mma instruction",
    "Sm80_mma_m16n8k16_f16_f16": "an Sm80 mma instruction",
    "Sm80_mma_m16n8k8_s32_s32": "an Sm80 mma instruction",
    "Sm80_RmemMatrixD_m16n8": "the Sm80 accumulator memory",
    "Sm80_cp_async_1d": "an Sm80 cp.async instruction",
    "Sm80_cp_async_2d": "an Sm80 cp.async instruction",
    "Sm80_ldmatrix_f32": "an ldmatrix instruction",
    "Sm80_ldmatrix_f16": "an ldmatrix instruction",
    "Sm80_ldmatrix_bf16": "an ldmatrix instruction",
    "Sm80_ldmatrix_i32": "an ldmatrix instruction",
    "Sm80_ldmatrix_16b": "an ldmatrix instruction",
    "Sm80_ldmatrix_32b": "an ldmatrix instruction",
    "CudaRmemUniform": "the warp-uniform register memory",
    "CudaRmemLinear": "the linear register memory",
    "get_cuda_packed32_loadv": "a packed-register load",
    "get_cuda_packed32_storev": "a packed-register store",
    "cuda_shfl_xor_sync_1d": "a warp shuffle",
    "cuda_shfl_xor_sync_sum_1d": "a warp shuffle",
    "cuda_shfl_xor_sync_sum_1f32": "a warp shuffle",
    "cuda_warp_broadcast_sync_1d": "a warp broadcast",
    "cuda_warp_broadcast_sync_2d": "a warp broadcast",
    **{f"Sm90_tma_{kind}_{rank}d": "a TMA instruction" for rank in range(1, 6)
       for kind in ("load", "load_multicast", "store", "reduce_add")},
})

# ThunderKittens names (`exo.platforms.cuda_tk`, and upstream's Sm90 ThunderKittens wgmma):
# every row of the tk tables is endgame-only (none exists in February's exo).
TK_NAMES: Mapping[str, str] = MappingProxyType({
    **{name: "a ThunderKittens copy" for name in TK_COPIES},
    **{name: "a ThunderKittens tile op" for name in TILE_OPS},
    **{name: "a ThunderKittens vector op" for name in VEC_OPS},
    **{name: "a ThunderKittens wgmma instruction" for name in TK_MMA_INSTRS},
    **{name: "a ThunderKittens memory or advice" for name in (
        "CudaTkWarpTile", "CudaTkWarpVec", "CudaTkRsInstrAdvice", "cuda_tk_load_rs_advice",
        "cuda_tk_store_rs_advice", "Sm90_TkRmemTileA", "Sm90_TkRmemTileD")},
})

# Names only the February dialect has (renamed or removed by July 2026).
SPORK26_NAMES: Mapping[str, str] = MappingProxyType({
    "CudaCommitGroup": "the commit group mechanism (endgame: Sm80_CommitGroup, "
                       "Sm90_TmaCommitGroup, Sm90_WgmmaCommitGroup)",
    "CudaEvent": "the CUDA event mechanism",
    "Sm80_mma_tf32": "the tf32 mma instruction (endgame: Sm80_mma_m16n8k8_f32_tf32)",
    "Sm80_mma_load_a_row_major_tf32": "an mma fragment load (endgame: Sm80_ldmatrix_*)",
    "Sm80_mma_load_a_col_major_tf32": "an mma fragment load (endgame: Sm80_ldmatrix_*)",
    "Sm80_mma_load_b_row_major_tf32": "an mma fragment load (endgame: Sm80_ldmatrix_*)",
    "Sm80_mma_load_b_col_major_tf32": "an mma fragment load (endgame: Sm80_ldmatrix_*)",
    "Sm80_RmemMatrixA": "the A-fragment memory",
    "Sm80_RmemMatrixB": "the B-fragment memory",
    "Sm90_RmemMatrixA": "the wgmma A-fragment memory",
    "Sm90_RmemMatrixD": "the wgmma accumulator memory",
    "Sm90_mma_async_tf32": "the tf32 wgmma instruction",
    "Sm90_zero_scale_d_f32": "the wgmma zeroing instruction",
    "Sm90_mma_store_d_row_major_tf32": "a wgmma accumulator store",
    "Sm90_mma_store_d_col_major_tf32": "a wgmma accumulator store",
    "Sm90_copy_tensor_to_smem_linear_2f32": "a TMA load (endgame: Sm90_tma_load_2d)",
    "Sm90_copy_tensor_to_smem_swizzled_2f32": "a TMA load (endgame: Sm90_tma_load_2d)",
    "Sm90_multicast_copy_tensor_to_smem_swizzled_2f32": "a multicast TMA load",
    "Sm90_copy_tensor_to_gmem_linear_2f32": "a TMA store (endgame: Sm90_tma_store_2d)",
    "Sm90_copy_tensor_to_gmem_swizzled_2f32": "a TMA store (endgame: Sm90_tma_store_2d)",
    "Sm90_reduce_tensor_to_gmem_linear_2f32": "a TMA reduction",
    "Sm90_reduce_tensor_to_gmem_swizzled_2f32": "a TMA reduction",
    "cuda_shfl_xor_sync_1f32_sum": "a warp shuffle (endgame: cuda_shfl_xor_sync_sum_1f32)",
    "get_cuda_packed32_load_v": "a packed-register load (endgame: get_cuda_packed32_loadv)",
    "get_cuda_packed32_store_v": "a packed-register store (endgame: "
                                 "get_cuda_packed32_storev)",
})


# A memory endgame prints under another name: its `CudaRmem` is an alias of `CudaRmemLinear`,
# whose name() its messages print (DIAL-19).
ENDGAME_MEMORY_NAMES: Mapping[str, str] = MappingProxyType({"CudaRmem": "CudaRmemLinear"})


def memory_text(name: str, dialect: str) -> str:
    """A memory's name as the dialect's messages print it (DIAL-19)."""
    return ENDGAME_MEMORY_NAMES.get(name, name) if dialect == ENDGAME else name


def marker(name: str) -> tuple[str, str] | None:
    """(dialect, what it is) of a name only one dialect has; None for a shared name."""
    for dialect, table in ((ENDGAME, ENDGAME_NAMES), (ENDGAME, TK_NAMES),
                           (SPORK26, SPORK26_NAMES)):
        if name in table:
            return dialect, table[name]
    return None
