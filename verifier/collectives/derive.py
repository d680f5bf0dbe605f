"""Deriving body tilings for `cuda_threads` loops and `CudaWarps` blocks (COLL-2.1..2.13).

Reads a parent `Tiling`, a `CollUnit`/`CudaWarps` and the device function; produces the body
tiling with its new guard, validated against the generated guards (COLL-6.2). Errors are
`RejectedInput` without a location (the caller attaches the statement's).
Non-goals: unit checks of statements (matching.py), distributed memory (distributed.py).
"""

from __future__ import annotations

from dataclasses import replace

from verifier.collectives.completion import common_domain, eval_unit, unit_label, unit_text
from verifier.collectives.index_expr import IndexExpr
from verifier.collectives.matching import match_mismatch
from verifier.collectives.tiling import DimOp, Guard, LoopRecord, Tiling, apply_splits
from verifier.collectives.validate import validate_tiling
from verifier.diagnostics import InternalError, RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction, CudaWarps
from verifier.lang.stdlib.units import CollUnit, cuda_agnostic_intact_cta, cuda_warp


class TilingError(RejectedInput):
    """A "Bad CollTiling (...)" failure (ERR-A21)."""


def _bad(parent: Tiling, unit: CollUnit, hi: int, msg: str, rule: str) -> TilingError:
    return TilingError(f"Bad CollTiling ({msg}); box={parent.box}, tried tiling {hi}-many "
                       f"{unit_label(unit)}, i.e. {unit_text(unit)}", code="ERR-A21", rule=rule)


def derive(parent: Tiling, iter_key: object | None, iter_name: str, unit: CollUnit,
           lo: int, hi: int, tiled: bool, c_name: str | None = None,
           warp_name: str | None = None, discarded: bool = False) -> Tiling:
    """deriveCollTiling: the tiled form (one tile per iteration, lo = 0) for cuda_threads,
    the specialised form (one tile covering [lo, hi)) for CudaWarps.

    Rules: COLL-2.1, COLL-2.2, COLL-2.3, COLL-2.4, COLL-2.5, COLL-2.8, COLL-4.3
    """
    u_domain, u_box = eval_unit(unit, parent.block_dim, parent.cluster_dim)
    unit_c, tiling_c = common_domain(parent.domain, u_domain)
    parent_box = tiling_c.translate_box(parent.box)
    unit_box = unit_c.translate_box(u_box, prepend=None)
    axes = apply_splits(parent.axes, tiling_c.splits)
    domain = tuple(a.extent for a in axes)
    tiled_axis = None
    for k, (d_k, w_k, u_k) in enumerate(zip(domain, parent_box, unit_box)):
        if u_k is None or u_k == w_k or u_k == d_k:
            continue
        if tiled_axis is not None:
            raise _bad(parent, unit, hi, "ambiguous dimension to tile", "COLL-2.3")
        tiled_axis = k
    depth = parent.depth + 1
    name = c_name if c_name is not None else f"exo_0thr_{iter_name}"
    if tiled_axis is None:
        if lo != 0 or hi != 1:
            raise _bad(parent, unit, hi, 'expect lo=0, hi=1 when CollUnit matches current one '
                       'in scope ("trivial tiling")', "COLL-2.3")
        guard = Guard(name, iter_key if tiled else None, IndexExpr.constant(0), None, None,
                      warp_name, discarded, 1, 0, iter_name)
        record = LoopRecord(iter_key, iter_name, None, 0, None, 1, 0, tiling_c.splits)
        return replace(parent, axes=axes, depth=depth, guards=parent.guards + (guard,),
                       record=record)
    k = tiled_axis
    s_box = parent_box[k]
    u_k = unit_box[k]
    assert s_box is not None and u_k is not None
    if hi * u_k > s_box:
        raise _bad(parent, unit, hi, f"not enough threads available; max_tile_count="
                   f"{s_box // u_k}", "COLL-2.4")
    axis = axes[k]
    iota = axis.leaf_intra
    offset = lo * u_k
    count = hi - lo if tiled else 1
    pitch = axis.pitch * u_k if tiled and hi - lo > 1 else 0
    intra = iota.sub(offset)
    if count > 1:
        intra = intra.mod(u_k)
    op = DimOp(iter_key, iter_name, offset, u_k if tiled else (hi - lo) * u_k, count, intra,
               pitch, depth)
    if tiled:
        expr, g_lo, g_hi = iota.div(u_k), (lo if lo > 0 else None), hi
    else:
        expr, g_lo, g_hi = iota, (lo * u_k if lo > 0 else None), hi * u_k
    if s_box == hi * u_k:
        g_hi = None
    if c_name is None:
        name = f"exo_{pitch}thr_{iter_name}"
    guard = Guard(name, iter_key if tiled else None, expr, g_lo, g_hi, warp_name, discarded,
                  count, pitch, iter_name)
    axes = axes[:k] + (replace(axis, ops=axis.ops + (op,)),) + axes[k + 1:]
    record = LoopRecord(iter_key, iter_name, k, offset, op.box, count, pitch, tiling_c.splits)
    return replace(parent, axes=axes, depth=depth, guards=parent.guards + (guard,),
                   record=record)


def _check_dev(parent: Tiling, dev: CudaDeviceFunction) -> None:
    if (parent.block_dim, parent.cluster_dim) != (dev.blockDim, dev.clusterDim):
        raise InternalError(f"tiling built for blockDim={parent.block_dim}, clusterDim="
                            f"{parent.cluster_dim} used with {dev}")


def tile_threads(parent: Tiling, iter_key: object, iter_name: str, lo: object, hi: object,
                 unit: CollUnit, dev: CudaDeviceFunction, *, validate: bool = True) -> Tiling:
    """Body tiling of `for iter in cuda_threads(lo, hi, unit=unit)`.

    lo must be the literal 0, hi an int literal >= 1 (D7); tiling failures are wrapped as
    "Failed to compile for {iter} in cuda_threads(...): ...". The result is validated against
    its guards (COLL-6.2); `validate=False` is for tests that inspect rejected tilings.
    Rules: COLL-2.7, COLL-2.9, LANG-4.10
    """
    _check_dev(parent, dev)
    hint = "(rewrite with simplify(...) if needed)"
    if not isinstance(lo, int) or isinstance(lo, bool):
        raise RejectedInput(f"expected literal int value for lo of {iter_name} loop {hint}",
                            code="ERR-A20", rule="COLL-2.7")
    if lo != 0:
        raise RejectedInput(f"expected 0 for lo of {iter_name} loop {hint}", code="ERR-A20",
                            rule="COLL-2.7")
    if not isinstance(hi, int) or isinstance(hi, bool):
        raise RejectedInput(f"expected literal int value for hi of {iter_name} loop {hint}",
                            code="ERR-A20", rule="COLL-2.7")
    if hi < 1:
        raise RejectedInput(f"hi must be ≥ 1 for {iter_name} loop, not {hi}", code="ERR-A20",
                            rule="COLL-2.7")
    try:
        body = derive(parent, iter_key, iter_name, unit, 0, hi, True,
                      warp_name=parent.warp_name)
    except RejectedInput as err:
        raise type(err)(f"Failed to compile for {iter_name} in cuda_threads(0, {hi}, "
                        f"unit={unit_label(unit)}): {err.message}", code=err.code,
                        rule=err.rule) from err
    if validate:
        validate_tiling(body, dev)
    return body


def _warps_error(msg: str, rule: str) -> RejectedInput:
    return RejectedInput(msg, code="ERR-A22", rule=rule)


def tile_warps(parent: Tiling, warps: CudaWarps, dev: CudaDeviceFunction,
               current_warp_name: str | None, *, validate: bool = True) -> tuple[Tiling, str]:
    """Body tiling of `with CudaWarps(lo, hi, name=...)` and the warp name now current.

    Top-level case (>= 2 warp variables, no enclosing CudaWarps): name check, intact-CTA
    requirement, defaults lo = 0 / hi = count, a discarded specialisation to the named range,
    then [lo, hi) relative to it. Nested case: same name, explicit lo and hi, one
    specialisation. Rules: COLL-2.11, COLL-2.12, COLL-2.13, COLL-4.6
    """
    _check_dev(parent, dev)
    names = [w.name for w in dev.warp_config]
    if len(names) == 1 and current_warp_name is None:
        current_warp_name = names[0]
    tiling = parent
    if len(names) > 1 and current_warp_name is None:
        name = "" if warps.name is None else warps.name
        if name not in names:
            raise _warps_error(f"top-level CudaWarps must provide valid warp name, not "
                               f"{warps.name!r}; your CudaDeviceFunction defines: "
                               f"{sorted(names)}", "COLL-2.12")
        detail = match_mismatch(parent, cuda_agnostic_intact_cta, dev)
        if detail is not None:
            raise _warps_error(f"named {warps} requires CTA not to be subdivided by parent "
                               f"cuda_threads loop (detail: {detail})", "COLL-2.12")
        first, count = dev.warp_offset(name)
        lo = 0 if warps.lo is None else warps.lo
        hi = count if warps.hi is None else warps.hi
        if hi > count:
            raise _warps_error(f"CudaWarps.hi={hi} out-of-range for {name!r}-named warps "
                               f"(only have {count})", "COLL-2.12")
        try:
            tiling = derive(parent, None, f"CudaWarps_{name}", cuda_warp, first, first + count,
                            False, c_name=f"CudaWarps_{name}", warp_name=name, discarded=True)
        except RejectedInput as err:
            raise _warps_error(f"failed to compile {warps}: {err.message}", "COLL-2.12") from err
        tiling = replace(tiling, depth=parent.depth)
    else:
        name = current_warp_name if warps.name is None else warps.name
        if name != current_warp_name:
            raise _warps_error(f"nested CudaWarps cannot change warp name from "
                               f"{current_warp_name!r} to {name!r}", "COLL-2.13")
        if warps.lo is None or warps.hi is None:
            raise _warps_error("nested CudaWarps must define lo and hi explicitly", "COLL-2.13")
        lo, hi = warps.lo, warps.hi
    assert name is not None
    c_name = f"CudaWarps_{warps.lo}_{warps.hi}_{name}"
    try:
        body = derive(tiling, None, c_name, cuda_warp, lo, hi, False, c_name=c_name,
                      warp_name=name)
    except RejectedInput as err:
        raise _warps_error(f"failed to compile {warps}: {err.message}", "COLL-2.11") from err
    body = replace(body, depth=parent.depth + 1, warp_name=name)
    if validate:
        validate_tiling(body, dev)
    return body, name
