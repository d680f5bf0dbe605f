"""Hopper TMA instructions under their endgame names (July 2026; specs/dialects.md DIAL-1):
`Sm90_tma_load_{n}d`, `Sm90_tma_load_multicast_{n}d`, `Sm90_tma_store_{n}d` and
`Sm90_tma_reduce_add_{n}d` for n = 1..5, as upstream's `exo.platforms.Sm90` declares them.

The same `Instr` records as February's `Sm90_copy_tensor_to_*_2f32` rows (`instrs_sm90`), with
what endgame changed: any rank up to 5 (`size0`..`size{n-1}`), the element type given as the
precision keywords `dst=`, `src=` (one type), the swizzle a keyword (`swizzle=128` by default;
0 for linear SMEM) and the expect-tx byte count taken from the element type (SEM-8.6, TX-1).
Signatures only; access meaning is in semantics, lowering in codegen.
"""

from __future__ import annotations

from math import prod
from typing import Any

from verifier.lang.stdlib import units
from verifier.lang.stdlib.instrs import Instr, InstrParam, TmaInfo
from verifier.lang.stdlib.timelines import InstrTL, QualTL

KINDS = ("load", "load_multicast", "store", "reduce_add")
RANKS = range(1, 6)


def _sizes(rank: int) -> Any:
    return lambda kw: tuple(kw[f"size{k}"] for k in range(rank))


def default_box(kw: dict[str, Any], rank: int) -> tuple[int, ...]:
    """The SMEM box one issuing CTA copies: size0 / ncta rows of the window."""
    sizes = _sizes(rank)(kw)
    return (sizes[0] // kw.get("ncta", 1),) + sizes[1:]


def smem_box(kw: dict[str, Any], rank: int) -> tuple[int, ...]:
    box = kw.get("smem_box")
    return tuple(box) if box is not None else default_box(kw, rank)


def _check(rank: int, multicast: bool) -> Any:
    """Upstream's instance checks (ERR-P07): positive sizes, size0 divisible by ncta, an
    smem_box equal to the default box up to extra 1's, one element type, a wgmma swizzle."""
    def check(kw: dict[str, Any]) -> str | None:
        sizes = _sizes(rank)(kw)
        if "smem_box" not in kw:
            return "missing keyword smem_box (a tuple, or None for the default box)"
        if any(not isinstance(s, int) or s <= 0 for s in sizes):
            return "the sizes must be positive ints"
        if kw["dst"] != kw["src"]:
            return f"dst={kw['dst']} and src={kw['src']} must be the same type"
        if kw.get("swizzle", 128) not in (0, 32, 64, 128):
            return f"swizzle={kw.get('swizzle')} must be 0, 32, 64 or 128"
        if multicast:
            if kw["ncta"] <= 0 or kw["cta_stride"] <= 0:
                return "ncta and cta_stride must be positive"
            if sizes[0] % kw["ncta"]:
                return (f"Multicast TMA requires size0={sizes[0]} to be divisible by "
                        f"ncta={kw['ncta']}")
        box = kw.get("smem_box")
        if box is not None:
            if not isinstance(box, (tuple, list)) or \
                    not all(isinstance(c, int) and c >= 1 for c in box):
                return f"Non-integer smem_box={box!r} given"
            if [c for c in box if c != 1] != [c for c in default_box(kw, rank) if c != 1]:
                return (f"smem_box {tuple(box)} isn't compatible with expected box "
                        f"{default_box(kw, rank)} (we allow extra 1's but that's it)")
        if len(smem_box(kw, rank)) > 5:
            return "a tensor map box has at most 5 dimensions"
        return None
    return check


def _tensor_map(rank: int) -> Any:
    return lambda kw: (kw.get("swizzle", 128), smem_box(kw, rank))


def _tma(kind: str, rank: int) -> Instr:
    name = f"Sm90_tma_{kind}_{rank}d"
    sizes = tuple(f"size{k}" for k in range(rank))
    multicast = kind == "load_multicast"
    gmem_side, smem_side = ("dst", "src") if kind in ("store", "reduce_add") else ("src", "dst")
    # SMEM: swizzled (Sm90_SmemSwizzled(swizzle)) or, with swizzle=0, linear; both are
    # CudaBasicSmem, the formal both subclass (LANG-4.2)
    smem_shape = (lambda kw: (kw["ncta"],) + _sizes(rank)(kw)) if multicast else _sizes(rank)
    smem = InstrParam(smem_side, "tensor", "w" if smem_side == "dst" else "r", "CudaBasicSmem",
                      smem_shape,
                      distributed=(units.cuda_cta_in_cluster,) if multicast else ())
    reduce = kind == "reduce_add"
    gmem = InstrParam(gmem_side, "tensor", "r" if gmem_side == "src" else
                      ("a" if reduce else "w"), "CudaGmemLinear", _sizes(rank),
                      frozenset({QualTL.tmaG}) if reduce else frozenset(), clip="tensor_map",
                      tensor_map=_tensor_map(rank))
    params = (gmem, smem) if gmem_side == "dst" else (smem, gmem)
    template = (("ncta",) if multicast else ()) + sizes + (("cta_stride",) if multicast else ())
    extras = ("smem_box", "swizzle")
    if gmem_side == "dst":
        return Instr(name, params, InstrTL.tma_to_gmem_async_instr, units.cuda_warp, template,
                     _check(rank, False), precisions=("dst", "src"), extras=extras)
    return Instr(
        name, params, InstrTL.tma_to_smem_async_instr, units.cuda_warp, template,
        _check(rank, multicast), trailing_mech="CudaMbarrier",
        barrier_units=1 if multicast else 0,
        unit_of=(lambda kw: kw["ncta"] * units.cuda_warp_in_cluster_strided(kw["cta_stride"]))
        if multicast else None,
        precisions=("dst", "src"), extras=extras,
        tma=TmaInfo(lambda kw: kw.get("ncta", 1), lambda kw: prod(smem_box(kw, rank)), "dst",
                    "src"))


ENDGAME_TMA_INSTRS: dict[str, Instr] = {
    i.name: i for i in (_tma(kind, rank) for kind in KINDS for rank in RANKS)}

__all__ = ["ENDGAME_TMA_INSTRS"]
