"""Lowering of endgame's managed ring buffers of data (specs/dialects.md DIAL-18, DIAL-13).

A data ring `x: T[..., n @ ring_buffer_by(D), ...].ring_guarded_by(g)` is lowered as the plain
shared-memory array of its physical slots (D along the ring dimension), every index along that
dimension taken mod D: exactly the slots the proof checked every hazard on (DIAL-18 part 1).
The handoff needs no code (it is ordering the guard's Await already gives); the guard is an
ordinary ring mbarrier (DIAL-13). The space is persistent: no early release (lifetimes.py), and
no other allocation takes it (`reserve`, DIAL-20).
Reads a certified proc, produces the proc codegen lowers (after the certificate check).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from verifier.lang.ir import ir


def _rings(stmts: tuple[ir.Stmt, ...]) -> dict[ir.Sym, ir.RingDim]:
    out: dict[ir.Sym, ir.RingDim] = {}
    for s in ir.statements(stmts):
        if isinstance(s, ir.Alloc) and isinstance(s.typ, ir.Tensor) and s.typ.ring is not None:
            out[s.name] = s.typ.ring
    return out


def _slot(e: ir.Expr, ring: ir.RingDim) -> ir.Expr:
    return ir.BinOp("%", e, ir.Const(ring.depth, e.loc), e.loc)


def _index(idx: tuple[Any, ...], ring: ir.RingDim) -> tuple[Any, ...]:
    out = list(idx)
    entry = out[ring.dim]
    if isinstance(entry, ir.Point):
        out[ring.dim] = ir.Point(_slot(entry.pt, ring), entry.loc)
    elif isinstance(entry, ir.Interval):  # never proved (DIAL-9): refused before codegen
        raise AssertionError("an interval along a data ring's ring dimension")
    else:
        out[ring.dim] = _slot(entry, ring)
    return tuple(out)


def _rewrite(node: Any, rings: dict[ir.Sym, ir.RingDim]) -> Any:
    if isinstance(node, tuple):
        return tuple(_rewrite(x, rings) for x in node)
    if not (dataclasses.is_dataclass(node) and not isinstance(node, type) and
            type(node).__module__ == ir.__name__):
        return node
    changes = {f.name: _rewrite(getattr(node, f.name), rings)
               for f in dataclasses.fields(node) if f.name != "loc"}
    if isinstance(node, ir.Alloc) and node.name in rings:
        typ = node.typ
        assert isinstance(typ, ir.Tensor) and typ.ring is not None
        shape = list(typ.shape)
        shape[typ.ring.dim] = ir.Const(typ.ring.depth, node.loc)
        # the guard stays: it marks the space persistent for the layout (`reserve`)
        changes["typ"] = ir.Tensor(typ.base, tuple(shape), typ.window,
                                   ring_guard=typ.ring_guard)
    buf = getattr(node, "buf", None)
    if buf in rings and isinstance(node, (ir.Read, ir.Assign, ir.Reduce, ir.Window)):
        changes["idx"] = _index(changes["idx"], rings[buf])
    return dataclasses.replace(node, **changes)


def lower_data_rings(proc: ir.Proc) -> ir.Proc:
    """`proc` with every data ring replaced by its physical slots (the proc unchanged when it
    has none)."""
    rings = _rings(proc.body)
    if not rings:
        return proc
    return dataclasses.replace(proc, body=_rewrite(proc.body, rings))


def reserve(body: tuple[ir.Stmt, ...], extent: Callable[[ir.Alloc], tuple[int, int]],
            offsets: dict[ir.Sym, int]) -> list[tuple[int, int]]:
    """Place every lowered data ring of a device function (it keeps its guard) one after the
    other from offset 0, before the layout of the others (`offsets`), and return their byte
    ranges, which the layout then never gives to another allocation: a data ring's space is
    persistent (DIAL-18 part 3), what DIAL-20's free check (every access complete, not seen
    by every thread) relies on. `extent` gives an allocation's (size, alignment).
    Rules: DIAL-20"""
    live: list[tuple[int, int]] = []
    top = 0
    for s in ir.statements(body):
        if isinstance(s, ir.Alloc) and isinstance(s.typ, ir.Tensor) and \
                s.typ.ring_guard is not None:
            size, align = extent(s)
            offsets[s.name] = -(-top // align) * align
            top = offsets[s.name] + size
            live.append((offsets[s.name], top))
    return live
