"""Hopper (sm_90a) instructions of upstream's `exo.platforms.Sm90`: TMA copies and reductions,
wgmma and its accumulator helpers.

Their signatures (parameters, template keywords, formal memories, instr-tl, collective unit,
trailing barrier) are rows of the same `Instr` records as `instrs`, so kernel files that call
them load and pass the static checks that do not depend on their meaning. Their access
semantics (TMA transaction counts, async proxies, wgmma commit groups) are outside the
encoding for now: `unmodelled` makes every call `unsupported` naming the instruction
(ERR-V11). A semantic implementation fills in these rows and clears `unmodelled`.
LANG-3.6, LANG-6.6
"""

from __future__ import annotations

from typing import Any

from verifier.lang import units
from verifier.lang.instrs import Instr, InstrParam
from verifier.lang.timelines import InstrTL

_WHY = "(Hopper TMA/wgmma semantics are not modelled yet)"
_TENSOR_MAP = ""  # a window of an `Sm90_tensorMap` special window; its formal is not checked


def _box_2d(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (kw["size0"], kw["size1"])


def _smem_box_check(kw: dict[str, Any]) -> str | None:
    box = kw.get("smem_box")
    if box is None:
        return None
    if not isinstance(box, tuple) or not all(isinstance(b, int) and b > 0 for b in box):
        return f"smem_box must be a tuple of positive ints, not {box!r}"
    return None


def _copy_to_smem(name: str, smem: str) -> Instr:
    return Instr(
        name,
        (InstrParam("dst", "tensor", "w", smem, _box_2d, out_of_order=True),
         InstrParam("src", "tensor", "r", _TENSOR_MAP, _box_2d, out_of_order=True)),
        InstrTL.tma_to_smem_async_instr, units.cuda_warp, ("size0", "size1"), _smem_box_check,
        trailing_mech="CudaMbarrier", extras=("smem_box",), unmodelled=f"{name} {_WHY}")


def _multicast_unit(kw: dict[str, Any]) -> units.CollUnit:
    return kw["ncta"] * units.cuda_warp_in_cluster_strided(kw["cta_stride"])


def _multicast() -> Instr:
    name = "Sm90_multicast_copy_tensor_to_smem_swizzled_2f32"
    return Instr(
        name,
        (InstrParam("dst", "tensor", "w", "Sm90_SmemSwizzled",
                    lambda kw: (kw["ncta"], kw["size0"], kw["size1"]),
                    distributed=(units.cuda_cta_in_cluster,), owner_only=False,
                    out_of_order=True),
         InstrParam("src", "tensor", "r", _TENSOR_MAP, _box_2d, out_of_order=True)),
        InstrTL.tma_to_smem_async_instr, units.cuda_warp, ("size0", "size1", "ncta"),
        _smem_box_check, trailing_mech="CudaMbarrier", barrier_units=1,
        unit_of=_multicast_unit, extras=("cta_stride", "smem_box"),
        unmodelled=f"{name} {_WHY}")


def _copy_to_gmem(name: str, smem: str, reduce: bool) -> Instr:
    return Instr(
        name,
        (InstrParam("dst", "tensor", "a" if reduce else "w", _TENSOR_MAP, _box_2d,
                    out_of_order=True),
         InstrParam("src", "tensor", "r", smem, _box_2d, out_of_order=True)),
        InstrTL.tma_to_gmem_async_instr, units.cuda_warp, ("size0", "size1"), _smem_box_check,
        extras=("smem_box",), unmodelled=f"{name} {_WHY}")


def _mn(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (kw["M"], kw["N"])


def _nm(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (kw["N"], kw["M"])


def _store_d(name: str, col_major: bool) -> Instr:
    return Instr(
        name,
        (InstrParam("M_end", "index"), InstrParam("N_end", "index"),
         InstrParam("dst", "tensor", "w", "CudaDeviceVisibleLinear", _nm if col_major else _mn),
         InstrParam("src", "tensor", "r", "Sm90_RmemMatrixD", _mn)),
        InstrTL.cuda_in_order_instr, units.cuda_warpgroup, ("M", "N"),
        unmodelled=f"{name} {_WHY}")


Sm90_copy_tensor_to_smem_linear_2f32 = _copy_to_smem(
    "Sm90_copy_tensor_to_smem_linear_2f32", "CudaSmemLinear")
Sm90_copy_tensor_to_smem_swizzled_2f32 = _copy_to_smem(
    "Sm90_copy_tensor_to_smem_swizzled_2f32", "Sm90_SmemSwizzled")
Sm90_multicast_copy_tensor_to_smem_swizzled_2f32 = _multicast()
Sm90_copy_tensor_to_gmem_linear_2f32 = _copy_to_gmem(
    "Sm90_copy_tensor_to_gmem_linear_2f32", "CudaSmemLinear", reduce=False)
Sm90_copy_tensor_to_gmem_swizzled_2f32 = _copy_to_gmem(
    "Sm90_copy_tensor_to_gmem_swizzled_2f32", "Sm90_SmemSwizzled", reduce=False)
Sm90_reduce_tensor_to_gmem_linear_2f32 = _copy_to_gmem(
    "Sm90_reduce_tensor_to_gmem_linear_2f32", "CudaSmemLinear", reduce=True)
Sm90_reduce_tensor_to_gmem_swizzled_2f32 = _copy_to_gmem(
    "Sm90_reduce_tensor_to_gmem_swizzled_2f32", "Sm90_SmemSwizzled", reduce=True)
Sm90_zero_scale_d_f32 = Instr(
    "Sm90_zero_scale_d_f32",
    (InstrParam("d", "tensor", "w", "Sm90_RmemMatrixD", _mn),),
    InstrTL.wgmma_zero_instr, units.cuda_warpgroup, ("M", "N"),
    unmodelled=f"Sm90_zero_scale_d_f32 {_WHY}")
Sm90_mma_async_tf32 = Instr(
    "Sm90_mma_async_tf32",
    (InstrParam("d", "tensor", "rw", "Sm90_RmemMatrixD", _mn, out_of_order=False),
     InstrParam("a", "tensor", "r", "Sm90_SmemSwizzled", lambda kw: (kw["M"], 8),
                out_of_order=True),
     InstrParam("b", "tensor", "r", "Sm90_SmemSwizzled", lambda kw: (kw["N"], 8),
                out_of_order=True)),
    InstrTL.wgmma_async_instr, units.cuda_warpgroup, ("M", "N"),
    unmodelled=f"Sm90_mma_async_tf32 {_WHY}")
Sm90_mma_store_d_col_major_tf32 = _store_d("Sm90_mma_store_d_col_major_tf32", col_major=True)
Sm90_mma_store_d_row_major_tf32 = _store_d("Sm90_mma_store_d_row_major_tf32", col_major=False)

SM90_INSTRS: dict[str, Instr] = {
    name: value for name, value in dict(globals()).items()
    if isinstance(value, Instr) and not name.startswith("_")}
