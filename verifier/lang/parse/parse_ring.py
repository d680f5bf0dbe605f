"""Parsing of the endgame dialect's barrier declarations (DIAL-2, DIAL-3): dimensions written
`extent @ ring_buffer_by(depth)`, and mechanisms spelled `CudaMbarrierPreArrive(k)`,
`Sm80_CommitGroup`, ... . Produces the `ring`, `pre_arrive` and `spelled` fields of
`ir.BarrierType`, and of data ring buffers `T[n @ ring_buffer_by(d)].ring_guarded_by(b)` (the
`ring` and `ring_guard` of `ir.Tensor`, DIAL-18). Non-goals: whether a ring is legal for its
mechanism or guard (verifier.check.static_rings, static_data_rings).
"""

from __future__ import annotations

import ast

from verifier.lang.ir import ir
from verifier.lang.parse.parser_view import ParserView
from verifier.lang.stdlib import dialects
from verifier.lang.stdlib.endgame import base_mechanism, ring_buffer_by
from verifier.lang.stdlib.memories import CudaCommitGroup, CudaEvent

_SPORK26_MECHS = {CudaCommitGroup.name: CudaCommitGroup, CudaEvent.name: CudaEvent}


def ring_annotation(p: ParserView, node: ast.expr) -> tuple[ast.expr, int] | None:
    """(extent node, depth) of `extent @ ring_buffer_by(depth)`; None for a plain extent."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)):
        return None
    value = p.py_eval(node.right)
    if not isinstance(value, ring_buffer_by):
        raise p.err(node.right, f"expected `@ ring_buffer_by(depth)` on a dimension, not "
                    f"`@ {ast.unparse(node.right)}`", "ERR-P19", "DIAL-2")
    return node.left, value.depth


def barrier_dims(p: ParserView, dims: list[ast.expr]) -> tuple[tuple[ir.Expr, ...],
                                                                 ir.RingDim | None]:
    """The extents of `barrier[d0, d1 @ ring_buffer_by(k), ...]` and its ring dimension; a
    second ring dimension is ERR-A16 (upstream: "multiple managed ring buffer dimensions")."""
    shape: list[ir.Expr] = []
    ring: ir.RingDim | None = None
    for k, d in enumerate(dims):
        found = ring_annotation(p, d)
        if found is None:
            shape.append(p.expr(d))
            continue
        extent, depth = found
        if ring is not None:
            raise p.err(d, "multiple managed ring buffer dimensions in barrier["
                        f"{', '.join(ast.unparse(x) for x in dims)}]", "ERR-A16", "DIAL-2")
        p.note_dialect(dialects.ENDGAME, "`@ ring_buffer_by`", d)
        ring = ir.RingDim(k, depth)
        shape.append(p.expr(extent))
    return tuple(shape), ring


def mechanism(p: ParserView, node: ast.expr) -> tuple[object, int, str]:
    """(February mechanism, pre-arrived elements, spelling) of a barrier's `@` annotation; an
    endgame spelling, or a February-only mechanism, is dialect evidence (DIAL-1)."""
    value = p.memory(node)
    found = base_mechanism(value)
    if found is None:
        raise p.err(node, f"expected @X annotation to subclass BarrierMechanism, not {value}",
                    "ERR-P19", "LANG-5.2")
    mech, pre, _, spelled = found
    if spelled:
        p.note_dialect(dialects.ENDGAME, spelled, node)
    elif getattr(mech, "name", "") in _SPORK26_MECHS:
        p.note_dialect(dialects.SPORK26, str(mech), node)
    return mech, pre, spelled


def data_type(p: ParserView, node: ast.expr) -> ir.Tensor | None:
    """`T[d0, n @ ring_buffer_by(D), ...].ring_guarded_by(b)`: an endgame managed ring buffer
    of data (DIAL-18), as an `ir.Tensor` with its ring dimension and guard; None for a type
    with neither (parsed as any data type). A second ring dimension is ERR-A16, a guard that is
    not a barrier ERR-P23 (upstream: "ring_guarded_by mult be a BarrierExpr")."""
    guard: ir.Sym | None = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "ring_guarded_by":
        if len(node.args) != 1 or node.keywords:
            raise p.err(node, "ring_guarded_by takes one argument", "ERR-P18", "DIAL-18")
        arg = node.args[0]
        found = p.lookup(arg.id) if isinstance(arg, ast.Name) else None
        if found is None or found.kind != "barrier":
            raise p.err(arg, f"ring_guarded_by({ast.unparse(arg)}) must name a barrier",
                        "ERR-P23", "DIAL-18")
        p.note_dialect(dialects.ENDGAME, ".ring_guarded_by(...)", node)
        guard, node = found.sym, node.func.value
    if not isinstance(node, ast.Subscript):
        return None if guard is None else _guarded_scalar(p, node)
    dims = list(node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice])
    if guard is None and not any(ring_annotation_node(p, d) for d in dims):
        return None
    base = p.scalar_name(node.value)
    if base is None:
        raise p.err(node, f"expected a data type such as f32[n], not `{ast.unparse(node)}`",
                    "ERR-P11", "LANG-2.4")
    shape, ring = [], None
    for k, d in enumerate(dims):
        found_ring = ring_annotation(p, d)
        if found_ring is None:
            shape.append(p.expr(d))
            continue
        if ring is not None:
            raise p.err(d, "multiple managed ring buffer dimensions in "
                        f"{ast.unparse(node)}", "ERR-A16", "DIAL-18")
        p.note_dialect(dialects.ENDGAME, "`@ ring_buffer_by`", d)
        ring = ir.RingDim(k, found_ring[1])
        shape.append(p.expr(found_ring[0]))
    return ir.Tensor(base, tuple(shape), False, ring, guard)


def ring_annotation_node(p: ParserView, d: ast.expr) -> bool:
    return isinstance(d, ast.BinOp) and isinstance(d.op, ast.MatMult) and \
        isinstance(p.py_eval(d.right), ring_buffer_by)


def _guarded_scalar(p: ParserView, node: ast.expr) -> ir.Tensor:
    raise p.err(node, f"Unexpected .ring_guarded_by(...) for scalar type `{ast.unparse(node)}`",
                "ERR-P11", "DIAL-18")
