"""Instructions under their endgame names (July 2026; specs/dialects.md DIAL-1): the generic
`Sm80_mma_m16n8` on packed registers and `Sm80_mma_m16n8_zero`, with their typed `partial`s,
as upstream's `exo.platforms.Sm80` declares them, and the renamed warp shuffles.

Rows of the same `Instr` records as `instrs` (signatures as data). `Sm80_mma_m16n8` reads its
A and B operands as `CudaRmemPacked32` windows whose two leading dimensions are distributed
over the warp (4 threads apart, then 1: COLL-5.12), read by the whole warp; D is the opaque
16 x 8 accumulator. LANG-3.6
"""

from __future__ import annotations

from typing import Any

from verifier.lang.stdlib import units
from verifier.lang.stdlib.instrs import FixedShape, Instr, InstrParam, lane_mask_check
from verifier.lang.stdlib.scalars import ScalarInfo
from verifier.lang.stdlib.timelines import InstrTL

_IN_ORDER = InstrTL.cuda_in_order_instr
_TYPES = {("f32", "f32", "f32"), ("f32", "bf16", "bf16"), ("f32", "f16", "f16"),
          ("f16", "f16", "f16"), ("i32", "i32", "i32")}
_SPREAD = (4 * units.cuda_thread, units.cuda_thread)


def _mma_check(kw: dict[str, Any]) -> str | None:
    types = (kw.get("D"), kw.get("A"), kw.get("B"))
    if types not in _TYPES:
        return f"D, A, B = {types} is not an Sm80 mma type combination"
    if ScalarInfo(kw["A"]).bits * kw["K_pack"] != 32:
        return f"A={kw['A']} requires K_pack=32 // {ScalarInfo(kw['A']).bits}, not " \
               f"{kw['K_pack']}"
    return None


Sm80_mma_m16n8 = Instr(
    "Sm80_mma_m16n8",
    (InstrParam("D", "tensor", "rw", "Sm80_RmemMatrixD", lambda kw: (16, 8)),
     InstrParam("A", "tensor", "r", "CudaRmemPacked32", lambda kw: (8, 4, 2, 2, kw["K_pack"]),
                distributed=_SPREAD),
     InstrParam("B", "tensor", "r", "CudaRmemPacked32", lambda kw: (8, 4, 2, kw["K_pack"]),
                distributed=_SPREAD)),
    _IN_ORDER, units.cuda_warp, ("K_pack",), _mma_check, precisions=("D", "A", "B"))

Sm80_mma_m16n8_zero = Instr(
    "Sm80_mma_m16n8_zero",
    (InstrParam("D", "tensor", "w", "Sm80_RmemMatrixD", lambda kw: (16, 8)),),
    _IN_ORDER, units.cuda_warp, precisions=("D",))

def _shuffle(name: str) -> Instr:
    """Endgame's warp shuffles: February's `cuda_shfl_xor_sync_1f32[_sum]` with the operands
    named dst/src and their type a precision keyword (upstream's cuda_warp_instr)."""
    pair = (units.cuda_thread,)
    return Instr(
        name,
        (InstrParam("dst", "tensor", "w", "CudaRmem", FixedShape((2,)), distributed=pair,
                    owner_only=True),
         InstrParam("src", "tensor", "r", "CudaRmem", FixedShape((2,)), distributed=pair,
                    owner_only=True)),
        _IN_ORDER, 2 * units.cuda_threads_strided(1, 1), ("laneMask",), lane_mask_check,
        unit_of=lambda kw: 2 * units.cuda_threads_strided(1, kw["laneMask"]),
        precisions=("dst", "src"))


_shfl_1d = _shuffle("cuda_shfl_xor_sync_1d")
_shfl_sum_1d = _shuffle("cuda_shfl_xor_sync_sum_1d")

ENDGAME_SM80_INSTRS: dict[str, Instr] = {
    "cuda_shfl_xor_sync_1d": _shfl_1d,
    "cuda_shfl_xor_sync_sum_1d": _shfl_sum_1d,
    "cuda_shfl_xor_sync_sum_1f32": _shfl_sum_1d.partial(dst="f32", src="f32"),
    "Sm80_mma_m16n8": Sm80_mma_m16n8,
    "Sm80_mma_m16n8_zero": Sm80_mma_m16n8_zero,
    "Sm80_mma_m16n8k8_f32_tf32": Sm80_mma_m16n8.partial(K_pack=1, D="f32", A="f32", B="f32"),
    "Sm80_mma_m16n8k16_f32_bf16": Sm80_mma_m16n8.partial(K_pack=2, D="f32", A="bf16",
                                                         B="bf16"),
    "Sm80_mma_m16n8k16_f32_f16": Sm80_mma_m16n8.partial(K_pack=2, D="f32", A="f16", B="f16"),
    "Sm80_mma_m16n8k16_f16_f16": Sm80_mma_m16n8.partial(K_pack=2, D="f16", A="f16", B="f16"),
    "Sm80_mma_m16n8k8_s32_s32": Sm80_mma_m16n8.partial(K_pack=1, D="i32", A="i32", B="i32"),
}
