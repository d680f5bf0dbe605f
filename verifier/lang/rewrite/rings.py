"""Endgame's ring-buffer scheduling operations, reproduced exactly (specs/upstream_api.md API-1,
specs/dialects.md DIAL-18): `set_dim_size_annotation` (add or remove `@ ring_buffer_by(d)` on
one dimension of an allocation) and `set_ring_guarded_by` (set or clear the barrier a data ring
buffer is guarded by). Both change an allocation's type only; the statements are untouched, so
the proc verified is the one upstream builds. Errors are upstream's (its tests assert the
exception type and words). Non-goals: whether the result is a legal ring (the static rules
check it when the proc is verified, as upstream's compile does).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.lang.ir.printer import alloc_text
from verifier.lang.rewrite.scheduling import _replace_nodes, _target


def _alloc(p: ir.Proc, cursor: Any, op: str) -> ir.Alloc:
    if isinstance(cursor, ir.AllocCursor):  # a cursor of an older version of `p`
        try:
            cursor = p.forward(cursor)
        except LookupError as e:
            raise RejectedInput(f"{op}: {e}", rule="API-1", code="ERR-P00") from None
    target = _target(p, cursor, op)
    if not isinstance(target, ir.Alloc):
        raise TypeError(f"{op}: {target.name.name} is an argument, not an allocation")
    return target


def _with_type(p: ir.Proc, target: ir.Alloc, typ: ir.Type) -> ir.Proc:
    new = dataclasses.replace(target, typ=typ)
    return _replace_nodes(p, lambda n: new if n is target else n)


def set_dim_size_annotation(p: ir.Proc, cursor: Any, dim_idx: Any, annotation: Any) -> ir.Proc:
    """Dimension `dim_idx` of the allocation gets `annotation` (`ring_buffer_by(d)` or None)."""
    if annotation is not None and not isinstance(annotation, ir.ring_buffer_by):
        raise TypeError(f"set_dim_size_annotation: expected a size annotation such as "
                        f"ring_buffer_by(d) or None, not {annotation!r}")
    if not isinstance(dim_idx, int) or isinstance(dim_idx, bool):
        raise TypeError(f"set_dim_size_annotation: expected an int dimension index, not "
                        f"{dim_idx!r}")
    target = _alloc(p, cursor, "set_dim_size_annotation")
    typ = target.typ
    shape = getattr(typ, "shape", ())
    if not 0 <= dim_idx < len(shape):
        raise ValueError(f"Cannot annotate out-of-bounds dimension index {dim_idx}")
    assert isinstance(typ, (ir.Tensor, ir.BarrierType))
    rings = [r for r in _rings(typ) if r.dim != dim_idx]
    if annotation is not None:
        rings.append(ir.RingDim(dim_idx, annotation.depth))
    rings.sort(key=lambda r: r.dim)
    first = rings[0] if rings else None
    if isinstance(typ, ir.BarrierType):
        return _with_type(p, target, dataclasses.replace(typ, ring=first,
                                                         extra_rings=tuple(rings[1:])))
    if len(rings) > 1:
        raise RejectedInput(f"multiple managed ring buffer dimensions in {alloc_text(target)} "
                            f"(dimensions {', '.join(str(r.dim) for r in rings)})",
                            target.loc, code="ERR-A16", rule="DIAL-18")
    return _with_type(p, target, dataclasses.replace(typ, ring=first))


def _rings(typ: ir.Tensor | ir.BarrierType) -> list[ir.RingDim]:
    extra = typ.extra_rings if isinstance(typ, ir.BarrierType) else ()
    return ([typ.ring] if typ.ring is not None else []) + list(extra)


def set_ring_guarded_by(p: ir.Proc, cursor: Any, guard: Any) -> ir.Proc:
    """The data allocation at `cursor` is guarded by the barrier at `guard` (None clears it)."""
    target = _alloc(p, cursor, "set_ring_guarded_by")
    if not isinstance(target.typ, (ir.Tensor, ir.BarrierType)):
        raise TypeError(f"{alloc_text(target)}: type doesn't support ring_guarded_by")
    sym: ir.Sym | None = None
    if guard is not None:
        barrier = _alloc(p, guard, "set_ring_guarded_by")
        if not isinstance(barrier.typ, ir.BarrierType):
            raise TypeError(f"{alloc_text(barrier)}: not a barrier")
        sym = barrier.name
    if isinstance(target.typ, ir.BarrierType):
        if sym is None:
            return p
        raise RejectedInput(f"shouldn't have .ring_guarded by for barrier {alloc_text(target)}",
                            target.loc, code="ERR-A16", rule="DIAL-18")
    return _with_type(p, target, dataclasses.replace(target.typ, ring_guard=sym))
