"""The Hopper (sm_90a) instructions of the closed library (language.md §7.6): TMA loads, stores
and reductions through tensor maps, multicast TMA, and the wgmma family.

Signatures only, as data (`instrs.Instr`); what an access means is in `verifier.semantics`
(rules.py, access.py, transactions.py), lowering text in codegen. The template keywords follow
upstream's `exo.platforms.Sm90` (`size0`, `size1`, `ncta`, `cta_stride`, optional `smem_box`;
`M`, `N` for wgmma); a bad keyword value is ERR-P07.
"""

from __future__ import annotations

from math import prod
from typing import Any

from verifier.lang.stdlib import units
from verifier.lang.stdlib.instrs import Instr, InstrParam, TmaInfo
from verifier.lang.stdlib.timelines import InstrTL, QualTL

# f32 is the only element type of these instrs: upstream computes the expect-tx byte count
# with 32-bit elements whatever the tensor map's type (SEM-8.6).
ELEMENT_BITS = 32


def default_box(kw: dict[str, Any]) -> tuple[int, ...]:
    """The SMEM box one issuing CTA copies: (size0 / ncta, size1) for multicast."""
    rows = kw["size0"] // kw.get("ncta", 1)
    return (rows, kw["size1"])


def smem_box(kw: dict[str, Any]) -> tuple[int, ...]:
    """The explicit `smem_box`, or the default box (upstream's _validate_smem_box)."""
    box = kw.get("smem_box")
    return tuple(box) if box is not None else default_box(kw)


def swizzle_of(kw: dict[str, Any], swizzled: bool) -> int:
    """Bytes of the innermost box row for a swizzled SMEM layout, 0 for a linear one."""
    return smem_box(kw)[-1] * ELEMENT_BITS // 8 if swizzled else 0


def _box_problem(kw: dict[str, Any], swizzled: bool, multicast: bool) -> str | None:
    if any(not isinstance(kw[k], int) or kw[k] <= 0 for k in ("size0", "size1")):
        return "size0 and size1 must be positive"
    if multicast:
        if kw["ncta"] <= 0 or kw.get("cta_stride", 1) <= 0:
            return "ncta and cta_stride must be positive"
        if kw["size0"] % (8 * kw["ncta"]) != 0:
            return "size0 must be a multiple of 8 * ncta"
    elif swizzled and (kw["size0"] % 8 != 0 or kw["size0"] < 8):
        return "size0 must be a positive multiple of 8"
    box = kw.get("smem_box")
    if box is not None:
        if not isinstance(box, (tuple, list)) or not box or \
                not all(isinstance(c, int) and c >= 1 for c in box):
            return f"smem_box {box!r} must be a tuple of positive ints"
        if [c for c in box if c != 1] != [c for c in default_box(kw) if c != 1]:
            return (f"smem_box {box} isn't compatible with expected box {default_box(kw)} (we "
                    "allow extra 1's but that's it)")
    if len(smem_box(kw)) > 5:
        return "a tensor map box has at most 5 dimensions"
    if swizzled and swizzle_of(kw, True) not in (32, 64, 128):
        return (f"Invalid smem_box {smem_box(kw)}; last dimension must lead to swizzle of 32, "
                f"64, or 128; not {swizzle_of(kw, True)}")
    return None


def _sizes(kw: dict[str, Any]) -> tuple[int, int]:
    return (kw["size0"], kw["size1"])


def _tma_to_smem(name: str, swizzled: bool, multicast: bool) -> Instr:
    smem = "Sm90_SmemSwizzled" if swizzled else "CudaSmemLinear"
    dst_shape = (lambda kw: (kw["ncta"],) + _sizes(kw)) if multicast else _sizes
    template = ("size0", "size1") + (("ncta",) if multicast else ())
    return Instr(
        name,
        (InstrParam("dst", "tensor", "w", smem, dst_shape,
                    distributed=(units.cuda_cta_in_cluster,) if multicast else (),
                    formal_params=lambda kw: (swizzle_of(kw, swizzled),) if swizzled else ()),
         InstrParam("src", "tensor", "r", "CudaGmemLinear", _sizes, clip="tensor_map",
                    tensor_map=lambda kw: (swizzle_of(kw, swizzled), smem_box(kw)))),
        InstrTL.tma_to_smem_async_instr, units.cuda_warp, template,
        lambda kw: _box_problem(kw, swizzled, multicast),
        trailing_mech="CudaMbarrier", barrier_units=1 if multicast else 0,
        unit_of=(lambda kw: kw["ncta"] * units.cuda_warp_in_cluster_strided(
            kw.get("cta_stride", 1))) if multicast else None,
        extras=("cta_stride", "smem_box") if multicast else ("smem_box",),
        tma=TmaInfo(lambda kw: kw.get("ncta", 1), lambda kw: prod(smem_box(kw)), ELEMENT_BITS,
                    "src"))


def _tma_to_gmem(name: str, swizzled: bool, reduce: bool) -> Instr:
    smem = "Sm90_SmemSwizzled" if swizzled else "CudaSmemLinear"
    quals = frozenset({QualTL.tmaG}) if reduce else frozenset()
    return Instr(
        name,
        (InstrParam("dst", "tensor", "a" if reduce else "w", "CudaGmemLinear", _sizes, quals,
                    clip="tensor_map",
                    tensor_map=lambda kw: (swizzle_of(kw, swizzled), smem_box(kw))),
         InstrParam("src", "tensor", "r", smem, _sizes,
                    formal_params=lambda kw: (swizzle_of(kw, swizzled),) if swizzled else ())),
        InstrTL.tma_to_gmem_async_instr, units.cuda_warp, ("size0", "size1"),
        lambda kw: _box_problem(kw, swizzled, False), extras=("smem_box",))


def _wgmma_problem(kw: dict[str, Any]) -> str | None:
    m, n = kw["M"], kw["N"]
    if m <= 0 or m % 64 != 0:
        return "Require M to be a positive multiple of 64"
    if n % 8 != 0 or not 8 <= n <= 256:
        return "Require N to be a multiple of 8 in [8, 256]"
    return None


def _mn(kw: dict[str, Any]) -> tuple[int, int]:
    return (kw["M"], kw["N"])


def _wgmma() -> dict[str, Instr]:
    d_params = lambda kw: _mn(kw)  # noqa: E731  (Sm90_RmemMatrixD(M, N))
    out = {
        "Sm90_zero_scale_d_f32": Instr(
            "Sm90_zero_scale_d_f32",
            (InstrParam("d", "tensor", "w", "Sm90_RmemMatrixD", _mn, formal_params=d_params),),
            InstrTL.wgmma_zero_instr, units.cuda_warpgroup, ("M", "N"), _wgmma_problem),
        "Sm90_mma_async_tf32": Instr(
            "Sm90_mma_async_tf32",
            (InstrParam("d", "tensor", "rw", "Sm90_RmemMatrixD", _mn, formal_params=d_params),
             InstrParam("a", "tensor", "r", "Sm90_SmemSwizzled", lambda kw: (kw["M"], 8),
                        formal_params=lambda kw: (128,), row_stride=32),
             InstrParam("b", "tensor", "r", "Sm90_SmemSwizzled", lambda kw: (kw["N"], 8),
                        formal_params=lambda kw: (128,), row_stride=32)),
            InstrTL.wgmma_async_instr, units.cuda_warpgroup, ("M", "N"), _wgmma_problem),
    }
    for major in ("row", "col"):
        name = f"Sm90_mma_store_d_{major}_major_tf32"
        shape = _mn if major == "row" else (lambda kw: (kw["N"], kw["M"]))
        out[name] = Instr(
            name,
            (InstrParam("M_end", "index"), InstrParam("N_end", "index"),
             InstrParam("dst", "tensor", "w", "CudaDeviceVisibleLinear", shape,
                        clip=f"store_d_{major}"),
             InstrParam("src", "tensor", "r", "Sm90_RmemMatrixD", _mn, formal_params=d_params)),
            InstrTL.cuda_in_order_instr, units.cuda_warpgroup, ("M", "N"), _wgmma_problem)
    return out


def sm90_instrs() -> dict[str, Instr]:
    out: dict[str, Instr] = {}
    for swizzled in (False, True):
        layout = "swizzled" if swizzled else "linear"
        for name, instr in (
                (f"Sm90_copy_tensor_to_smem_{layout}_2f32", _tma_to_smem(
                    f"Sm90_copy_tensor_to_smem_{layout}_2f32", swizzled, False)),
                (f"Sm90_copy_tensor_to_gmem_{layout}_2f32", _tma_to_gmem(
                    f"Sm90_copy_tensor_to_gmem_{layout}_2f32", swizzled, False)),
                (f"Sm90_reduce_tensor_to_gmem_{layout}_2f32", _tma_to_gmem(
                    f"Sm90_reduce_tensor_to_gmem_{layout}_2f32", swizzled, True))):
            out[name] = instr
    name = "Sm90_multicast_copy_tensor_to_smem_swizzled_2f32"
    out[name] = _tma_to_smem(name, True, True)
    out.update(_wgmma())
    return out


SM90_INSTRS: dict[str, Instr] = sm90_instrs()
