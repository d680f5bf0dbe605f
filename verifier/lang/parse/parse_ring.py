"""Parsing of the endgame dialect's barrier declarations (DIAL-2, DIAL-3): dimensions written
`extent @ ring_buffer_by(depth)`, and mechanisms spelled `CudaMbarrierPreArrive(k)`,
`Sm80_CommitGroup`, ... . Produces the `ring`, `pre_arrive` and `spelled` fields of
`ir.BarrierType`; a ring annotation on a data dimension, or `.ring_guarded_by(...)`, is a located
`unsupported` naming the construct (DIAL-9). Non-goals: whether a ring is legal for its
mechanism (verifier.check.static_rings).
"""

from __future__ import annotations

import ast

from verifier.diagnostics import Unsupported
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


def unsupported_data_ring(p: ParserView, node: ast.expr, what: str) -> Unsupported:
    """DIAL-9: managed ring buffers of data are outside the verifiable fragment."""
    return Unsupported(f"not supported by spork-verify: {what} (an endgame managed ring buffer "
                       "of data; only barrier arrays may be ring buffers, specs/dialects.md "
                       "DIAL-9)", p.loc(node), rule="DIAL-9", code="ERR-V11")


def data_ring_check(p: ParserView, node: ast.expr) -> None:
    """A data allocation's type written with `.ring_guarded_by(...)` or a ring dimension."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "ring_guarded_by":
        raise unsupported_data_ring(p, node, f"`.ring_guarded_by({ast.unparse(node.args[0])})`"
                                    if node.args else "`.ring_guarded_by()`")
    if isinstance(node, ast.Subscript):
        dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for d in dims:
            if isinstance(d, ast.BinOp) and isinstance(d.op, ast.MatMult) and \
                    isinstance(p.py_eval(d.right), ring_buffer_by):
                raise unsupported_data_ring(p, d, f"`{ast.unparse(d)}` on a data dimension")
