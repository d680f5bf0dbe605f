"""The Blackwell (sm_100a) instructions (specs/blackwell.md): tensor-memory allocation,
`tcgen05.mma` (cta_group::1, A and B from SMEM, D in TMEM) and `tcgen05.ld`.

Signatures only, as data (`instrs.Instr`), like instrs_sm90. `tcgen05.commit` is
`Arrive(tcgen05_commit) >> mbarrier`, `tcgen05.wait::ld` is `Fence(tcgen05_ld, cuda_in_order)`
and the tcgen05 fences are sync-tls (BW-3), not instrs. Bad keyword values carry the BW rule's
error code.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

from verifier.lang.stdlib import units
from verifier.lang.stdlib.instrs import Instr, InstrParam
from verifier.lang.stdlib.memories_sm100 import TMEM_COLUMNS, TMEM_LANES
from verifier.lang.stdlib.timelines import InstrTL

# K per instruction by kind (PTX ISA "tcgen05.mma", "Matrix shape": 32 bytes of A per row; kind::
# f8f6f4 is modelled for 8-bit e4m3 operands, K = 32). BW-2.1, BW-2.5
MMA_K = {"tf32": 8, "f16": 16, "f8f6f4": 32}


def tmem_columns_problem(kw: dict[str, Any]) -> str | None:
    """BW-1.2: an allocation is a power of two of columns in [32, 512]."""
    n = kw["ncols"]
    if n < 32 or n > TMEM_COLUMNS or n & (n - 1):
        return f"ncols={n}: tcgen05.alloc takes a power of two of columns in [32, 512]"
    return None


def mma_shape_problem(kw: dict[str, Any]) -> str | None:
    """BW-2.1: the cta_group::1 dense shapes (PTX ISA "tcgen05.mma")."""
    m, n = kw["M"], kw["N"]
    if m not in (64, 128):
        return f"M={m}: cta_group::1 takes M = 64 or 128"
    step = 8 if m == 64 else 16
    if n % step or not step <= n <= 256:
        return f"N={n}: M={m} takes N a multiple of {step} in [{step}, 256]"
    return None


def mma_pair_shape_problem(kw: dict[str, Any]) -> str | None:
    """BW-5.2: the cta_group::2 dense shape modelled: M = 256 (128 lanes in each CTA of the
    pair), N a multiple of 16 in [16, 256] (each CTA holds N / 2 rows of B)."""
    m, n = kw["M"], kw["N"]
    if m != 256:
        return (f"M={m}: cta_group::2 is modelled for M = 256 (M = 128 splits the lanes of "
                "each CTA, not modelled)")
    if n % 16 or not 16 <= n <= 256:
        return f"N={n}: M=256 takes N a multiple of 16 in [16, 256]"
    return None


def _columns(kw: dict[str, Any]) -> tuple[int, int]:
    return (TMEM_LANES, kw["ncols"])


def _pair_columns(kw: dict[str, Any]) -> tuple[int, int, int]:
    return (2, TMEM_LANES, kw["ncols"])


def _alloc(name: str) -> Instr:
    return Instr(name, (InstrParam("tmem", "tensor", "w", "Sm100_Tmem", _columns),),
                 InstrTL.cuda_in_order_instr, units.cuda_warp, ("ncols",),
                 tmem_columns_problem, template_code=("ERR-A34", "BW-1.2"))


def _alloc_pair(name: str) -> Instr:
    """BW-5.1: cta_group::2 allocation: one warp in each CTA of the pair, collectively; each
    warp's slice is its own CTA's columns (the window's first interval is the pair)."""
    return Instr(name, (InstrParam("tmem", "tensor", "w", "Sm100_Tmem", _pair_columns,
                                   distributed=(units.cuda_cta_in_cluster,), owner_only=True),),
                 InstrTL.cuda_in_order_instr, 2 * units.cuda_warp_in_cluster_strided(1),
                 ("ncols",), tmem_columns_problem, template_code=("ERR-A34", "BW-1.2"))


def mma_name(kind: str, group: int, a_in_tmem: bool = False, zero: bool = False) -> str:
    """`Sm100_mma_<kind>[_ts][_zero]_cta<group>`: `_zero` is the overwrite form (BW-2.3)."""
    return f"Sm100_mma_{kind}{'_ts' if a_in_tmem else ''}{'_zero' if zero else ''}_cta{group}"


def _d_access(zero: bool) -> str:
    """BW-2.3: the overwrite form (enable-input-d false) writes D; the accumulating form,
    D += A * B, reads and writes it."""
    return "w" if zero else "rw"


def _mma(kind: str, zero: bool = False) -> Instr:
    k = MMA_K[kind]
    name = mma_name(kind, 1, zero=zero)
    return Instr(
        name,
        (InstrParam("d", "tensor", _d_access(zero), "Sm100_Tmem", lambda kw: (kw["M"], kw["N"])),
         InstrParam("a", "tensor", "r", "CudaBasicSmem", lambda kw: (kw["M"], k)),
         InstrParam("b", "tensor", "r", "CudaBasicSmem", lambda kw: (kw["N"], k))),
        InstrTL.tcgen05_mma_instr, units.cuda_thread, ("M", "N"), mma_shape_problem,
        template_code=("ERR-P07", "BW-2.1"))


def _mma_pair(kind: str, zero: bool = False) -> Instr:
    """BW-5.2: tcgen05.mma.cta_group::2, issued by one thread of the pair's leader CTA: D
    (128 x N per CTA) in both CTAs' TMEM, A (128 x K per CTA) and B (N / 2 x K per CTA) in both
    CTAs' SMEM, every slice accessed by the issuing thread."""
    k = MMA_K[kind]
    name = mma_name(kind, 2, zero=zero)
    return Instr(
        name,
        (InstrParam("d", "tensor", _d_access(zero), "Sm100_Tmem", lambda kw: (2, TMEM_LANES, kw["N"]),
                    cta_pair=True),
         InstrParam("a", "tensor", "r", "CudaBasicSmem", lambda kw: (2, kw["M"] // 2, k),
                    cta_pair=True),
         InstrParam("b", "tensor", "r", "CudaBasicSmem", lambda kw: (2, kw["N"] // 2, k),
                    cta_pair=True)),
        InstrTL.tcgen05_mma_instr, units.cuda_thread, ("M", "N"), mma_pair_shape_problem,
        template_code=("ERR-P07", "BW-5.2"))


def _mma_tmem_a(kind: str, zero: bool = False) -> Instr:
    """BW-7.3: tcgen05.mma with A in TMEM (M lanes x K columns of 32 bits), cta_group::1."""
    k = MMA_K[kind]
    name = mma_name(kind, 1, a_in_tmem=True, zero=zero)
    return Instr(
        name,
        (InstrParam("d", "tensor", _d_access(zero), "Sm100_Tmem", lambda kw: (kw["M"], kw["N"])),
         InstrParam("a", "tensor", "r", "Sm100_Tmem", lambda kw: (kw["M"], k)),
         InstrParam("b", "tensor", "r", "CudaBasicSmem", lambda kw: (kw["N"], k))),
        InstrTL.tcgen05_mma_instr, units.cuda_thread, ("M", "N"), mma_shape_problem,
        template_code=("ERR-P07", "BW-2.1"))


def _ld_problem(kw: dict[str, Any]) -> str | None:
    n = kw["N"]
    return None if n in (1, 2, 4, 8, 16, 32, 64, 128) else \
        f"N={n}: tcgen05.ld.32x32b reads 1, 2, 4, ..., 128 columns"


def sm100_instrs() -> dict[str, Instr]:
    shape = lambda kw: (TMEM_LANES, kw["N"])  # noqa: E731
    out = {
        "Sm100_tmem_alloc": _alloc("Sm100_tmem_alloc"),
        "Sm100_tmem_dealloc": _alloc("Sm100_tmem_dealloc"),
        # BW-1.4: the CTA will allocate no more TMEM; no memory effect
        "Sm100_tmem_relinquish_alloc_permit": Instr(
            "Sm100_tmem_relinquish_alloc_permit", (), InstrTL.cuda_in_order_instr,
            units.cuda_warp),
        "Sm100_tmem_alloc_cta2": _alloc_pair("Sm100_tmem_alloc_cta2"),
        "Sm100_tmem_dealloc_cta2": _alloc_pair("Sm100_tmem_dealloc_cta2"),
        "Sm100_tmem_relinquish_alloc_permit_cta2": Instr(
            "Sm100_tmem_relinquish_alloc_permit_cta2", (), InstrTL.cuda_in_order_instr,
            2 * units.cuda_warp_in_cluster_strided(1)),
        # BW-2.1, BW-2.3, BW-5.2: each MMA in its accumulating and its overwrite form
        **{i.name: i for kind in ("tf32", "f16") for zero in (False, True)
           for i in (_mma_pair(kind, zero), _mma(kind, zero))},
        # BW-2.5: kind::f8f6f4 (e4m3), cta_group::1, both forms
        **{i.name: i for i in (_mma("f8f6f4", False), _mma("f8f6f4", True))},
        "Sm100_tmem_ld_32x32b_f32": Instr(
            "Sm100_tmem_ld_32x32b_f32",
            (InstrParam("dst", "tensor", "w", "Sm100_RmemMatrixD", shape),
             InstrParam("src", "tensor", "r", "Sm100_Tmem", shape,
                        distributed=(units.cuda_thread,), owner_only=True)),
            InstrTL.tcgen05_ld_instr, units.cuda_warpgroup, ("N",), _ld_problem,
            template_code=("ERR-P07", "BW-2.2")),
        # BW-7.1: tcgen05.st.32x32b, the warpgroup's registers into TMEM lanes 0..127
        "Sm100_tmem_st_32x32b_f32": Instr(
            "Sm100_tmem_st_32x32b_f32",
            (InstrParam("dst", "tensor", "w", "Sm100_Tmem", shape,
                        distributed=(units.cuda_thread,), owner_only=True),
             InstrParam("src", "tensor", "r", "Sm100_RmemMatrixD", shape)),
            InstrTL.tcgen05_st_instr, units.cuda_warpgroup, ("N",), _ld_problem,
            template_code=("ERR-P07", "BW-7.1")),
        # BW-7.2: tcgen05.cp.128x256b, 128 rows of 256 bits (8 x 32-bit) from SMEM into TMEM,
        # issued by one thread, completed through tcgen05.commit
        "Sm100_tmem_cp_128x256b_f32": Instr(
            "Sm100_tmem_cp_128x256b_f32",
            (InstrParam("dst", "tensor", "w", "Sm100_Tmem", lambda kw: (TMEM_LANES, 8)),
             InstrParam("src", "tensor", "r", "CudaBasicSmem", lambda kw: (TMEM_LANES, 8))),
            InstrTL.tcgen05_cp_instr, units.cuda_thread),
        "Sm100_mma_tf32_ts_cta1": _mma_tmem_a("tf32"),
        "Sm100_mma_tf32_ts_zero_cta1": _mma_tmem_a("tf32", zero=True),
        # BW-7.1: the warpgroup zeroes a register tile (ordinary in-order register writes)
        "Sm100_zero_d_f32": Instr(
            "Sm100_zero_d_f32", (InstrParam("dst", "tensor", "w", "Sm100_RmemMatrixD", shape),),
            InstrTL.cuda_in_order_instr, units.cuda_warpgroup, ("N",), _ld_problem,
            template_code=("ERR-P07", "BW-7.1")),
        "Sm100_store_d_row_major_f32": Instr(
            "Sm100_store_d_row_major_f32",
            (InstrParam("dst", "tensor", "w", "CudaDeviceVisibleLinear", shape),
             InstrParam("src", "tensor", "r", "Sm100_RmemMatrixD", shape)),
            InstrTL.cuda_in_order_instr, units.cuda_warpgroup, ("N",), _ld_problem,
            template_code=("ERR-P07", "BW-2.2")),
    }
    return out


SM100_INSTRS: dict[str, Instr] = sm100_instrs()


# The .cta_group of every instr that carries one in PTX (tcgen05.ld / st do not): the `_cta2`
# forms 2, the others 1. One table for the static rules (BW-5.1, BW-5.4) and codegen (BW-CG-9).
CTA_GROUP: Mapping[str, int] = MappingProxyType({
    name: 2 if name.endswith("_cta2") else 1 for name in SM100_INSTRS
    if name.endswith(("_cta1", "_cta2")) or name in (
        "Sm100_tmem_alloc", "Sm100_tmem_dealloc", "Sm100_tmem_relinquish_alloc_permit",
        "Sm100_tmem_cp_128x256b_f32")})
