"""Test-local signatures of the Sm90 instructions (language.md §7.6), for codegen tests only.

The stdlib does not declare the Sm90 instructions yet (the verifier refuses them, ERR-V11), so
the Hopper codegen tests import these `Instr` objects into their kernel files and certify the
kernels by hand. Names, parameter names and template keywords follow language.md §7.6 (and
upstream's signatures: positional = non-template parameters, keywords = template parameters);
codegen looks rows up by instruction name and parameters by name, so the stdlib's declarations
replace these unchanged once they exist.
"""

from __future__ import annotations

from verifier.lang import units
from verifier.lang.instrs import Instr, InstrParam
from verifier.lang.timelines import InstrTL, QualTL

_TO_SMEM = InstrTL.tma_to_smem_async_instr
_TO_GMEM = InstrTL.tma_to_gmem_async_instr


def _box(kw: dict[str, int]) -> tuple[int, ...]:
    return (kw["size0"], kw["size1"])


def _tma_load(name: str, smem: str) -> Instr:
    return Instr(name, (InstrParam("dst", "tensor", "w", smem, _box),
                        InstrParam("src", "tensor", "r", "Sm90_tensorMap", _box)),
                 _TO_SMEM, units.cuda_warp, ("size0", "size1"), trailing_mech="CudaMbarrier")


def _tma_store(name: str, smem: str, reduce: bool) -> Instr:
    dst = InstrParam("dst", "tensor", "a" if reduce else "w", "Sm90_tensorMap", _box,
                     frozenset({QualTL.tmaG}) if reduce else frozenset())
    return Instr(name, (dst, InstrParam("src", "tensor", "r", smem, _box)), _TO_GMEM,
                 units.cuda_warp, ("size0", "size1"))


def _multicast() -> Instr:
    name = "Sm90_multicast_copy_tensor_to_smem_swizzled_2f32"
    return Instr(
        name,
        (InstrParam("dst", "tensor", "w", "Sm90_SmemSwizzled",
                    lambda kw: (kw["ncta"], kw["size0"], kw["size1"])),
         InstrParam("src", "tensor", "r", "Sm90_tensorMap", _box)),
        _TO_SMEM, units.cuda_warp, ("ncta", "cta_stride", "size0", "size1"),
        trailing_mech="CudaMbarrier", barrier_units=1,
        unit_of=lambda kw: kw["ncta"] * units.cuda_warp_in_cluster_strided(kw["cta_stride"]))


def _mn(kw: dict[str, int]) -> tuple[int, ...]:
    return (kw["M"], kw["N"])


def _wgmma() -> dict[str, Instr]:
    wg = units.cuda_warpgroup
    out = {
        "Sm90_zero_scale_d_f32": Instr(
            "Sm90_zero_scale_d_f32", (InstrParam("d", "tensor", "w", "Sm90_RmemMatrixD", _mn),),
            InstrTL.wgmma_zero_instr, wg, ("M", "N")),
        "Sm90_mma_async_tf32": Instr(
            "Sm90_mma_async_tf32",
            (InstrParam("d", "tensor", "rw", "Sm90_RmemMatrixD", _mn),
             InstrParam("a", "tensor", "r", "Sm90_SmemSwizzled", lambda kw: (kw["M"], 8)),
             InstrParam("b", "tensor", "r", "Sm90_SmemSwizzled", lambda kw: (kw["N"], 8))),
            InstrTL.wgmma_async_instr, wg, ("M", "N")),
    }
    for major in ("row", "col"):
        name = f"Sm90_mma_store_d_{major}_major_tf32"
        shape = _mn if major == "row" else (lambda kw: (kw["N"], kw["M"]))
        out[name] = Instr(
            name, (InstrParam("M_end", "index"), InstrParam("N_end", "index"),
                   InstrParam("dst", "tensor", "w", "CudaDeviceVisibleLinear", shape),
                   InstrParam("src", "tensor", "r", "Sm90_RmemMatrixD", _mn)),
            InstrTL.cuda_in_order_instr, wg, ("M", "N"))
    return out


SM90_INSTRS: dict[str, Instr] = {
    "Sm90_copy_tensor_to_smem_linear_2f32":
        _tma_load("Sm90_copy_tensor_to_smem_linear_2f32", "CudaSmemLinear"),
    "Sm90_copy_tensor_to_smem_swizzled_2f32":
        _tma_load("Sm90_copy_tensor_to_smem_swizzled_2f32", "Sm90_SmemSwizzled"),
    "Sm90_multicast_copy_tensor_to_smem_swizzled_2f32": _multicast(),
    "Sm90_copy_tensor_to_gmem_linear_2f32":
        _tma_store("Sm90_copy_tensor_to_gmem_linear_2f32", "CudaSmemLinear", False),
    "Sm90_copy_tensor_to_gmem_swizzled_2f32":
        _tma_store("Sm90_copy_tensor_to_gmem_swizzled_2f32", "Sm90_SmemSwizzled", False),
    "Sm90_reduce_tensor_to_gmem_linear_2f32":
        _tma_store("Sm90_reduce_tensor_to_gmem_linear_2f32", "CudaSmemLinear", True),
    "Sm90_reduce_tensor_to_gmem_swizzled_2f32":
        _tma_store("Sm90_reduce_tensor_to_gmem_swizzled_2f32", "Sm90_SmemSwizzled", True),
    **_wgmma(),
}

globals().update(SM90_INSTRS)
__all__ = list(SM90_INSTRS)
