"""Static rules and sites of endgame's managed ring buffers of data (specs/dialects.md DIAL-18).

`x: T[..., n @ ring_buffer_by(D), ...].ring_guarded_by(g) @ M` has n logical elements along its
ring dimension stored in D physical slots: logical y lives in slot y mod D. Reads: the
allocation and the guard's declaration and Arrives; produces (1) upstream's static errors for
an ill-formed ring, (2) the *physical* access sites of x (the ring index reduced mod D, so two
logical elements sharing a slot are one element for every hazard obligation: slot reuse is an
ordinary race), and (3) the sites of x's *handoff shadow*, a variable of x's logical shape
written at the allocation by nobody (qual-tl `slot`) with pending tag arrive #0 of g[y] and
read by every access of x: upstream's `alloc_on_await`, so an access of element y before an
Await on g[y] is `use_before_alloc`. Non-goals: lowering (codegen refuses data rings).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from verifier.diagnostics import RejectedInput, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.ir.printer import alloc_text
from verifier.lang.stdlib.memories import CudaMbarrier
from verifier.check.sites import Context, Element, Loop, Trailing
from verifier.check.walk_view import AnalyzerView
from verifier.semantics import rules
from verifier.semantics.data_rings import multicast_dims
from verifier.semantics.rules import AccessKind


@dataclass(frozen=True)
class DataRing:
    """A data ring buffer: its ring dimension, guard, shadow variable and both shapes."""

    sym: ir.Sym
    ring: ir.RingDim
    guard: ir.Sym
    shadow: ir.Sym
    logical: tuple[ir.Expr, ...]
    physical: tuple[ir.Expr, ...]


def _err(msg: str, loc: SrcLoc) -> RejectedInput:
    return RejectedInput(msg, loc, code="ERR-A16", rule="DIAL-18")


def declare(an: AnalyzerView, s: ir.Alloc, proc: ir.Proc) -> DataRing | None:
    """DIAL-18's static rules (upstream's words): a ring dimension needs `.ring_guarded_by`,
    the guard is an endgame ring mbarrier with no more dimensions than x and its ring on the
    same dimension; x lives in shared memory. None for an allocation that is not a data ring."""
    typ = s.typ
    if not isinstance(typ, ir.Tensor) or typ.ring is None:
        return None
    if typ.ring_guard is None:
        raise _err(f"managed ring buffer missing .ring_guarded_by {alloc_text(s)}", s.loc)
    decl = an.barrier_decls.get(typ.ring_guard)
    if decl is None:
        raise _err(f".ring_guarded_by({typ.ring_guard.name}) of {s.name.name} names no barrier "
                   "in scope", s.loc)
    guard_text = f"{decl.sym.name}: barrier[...] @ {decl.mech_name}"
    if len(decl.shape) > len(typ.shape):
        raise _err(f"{guard_text} has too many dimensions to match {alloc_text(s)}", s.loc)
    if decl.mech is not CudaMbarrier or decl.ring is None or decl.ring.dim != typ.ring.dim:
        raise _err(f"{guard_text} has incorrect managed ring buffer dimension index to match "
                   f"{alloc_text(s)}", s.loc)
    if not getattr(s.mem, "is_smem", False):
        raise Unsupported(f"not supported by spork-verify: the data ring buffer {s.name.name} "
                          f"@ {s.mem} outside shared memory (specs/dialects.md DIAL-18)", s.loc,
                          code="ERR-V11", rule="DIAL-18")
    physical = list(typ.shape)
    physical[typ.ring.dim] = ir.Const(typ.ring.depth, s.loc)
    return DataRing(s.name, typ.ring, typ.ring_guard, ir.Sym.fresh(s.name.name), typ.shape,
                    tuple(physical))


def handoff(an: AnalyzerView, dr: DataRing, proc_body: tuple[ir.Stmt, ...], ctx: Context,
            loc: SrcLoc) -> None:
    """DIAL-18 (alloc_on_await): element y of x is handed over by arrive #0 of g[y] (g's
    multicast group): a write of the shadow at the allocation, seen by nobody."""
    decl = an.barrier_decls[dr.guard]
    loops, points = [], []
    for k, extent in enumerate(dr.logical):
        sym = ir.Sym.fresh(f"{dr.sym.name}.slot{k}")
        loops.append(Loop(sym, ir.Const(0, loc), extent, "seq", loc))
        points.append(ir.Var(sym, loc))
    group = multicast_dims(proc_body, dr.guard)
    tag = tuple(None if k in group else points[k] for k in range(len(decl.shape)))
    inner = replace(ctx, loops=ctx.loops + tuple(loops))
    an.add_site(dr.shadow, Element(tuple(points), tuple(None for _ in points)), AccessKind.write,
                rules.SLOT_ENTRY, False, inner, loc, 0, out_of_order=True,
                trailing=Trailing(dr.guard, tag, loc, numbered_zero=True))


def physical(dr: DataRing, element: Element, loc: SrcLoc) -> Element:
    """The element's physical slot: the ring index mod the depth (a point; an interval along
    the ring dimension is outside the fragment)."""
    r = dr.ring.dim
    pt = element.points[r]
    if pt is None:
        raise Unsupported(f"not supported by spork-verify: an interval along the ring "
                          f"dimension {r} of the data ring buffer {dr.sym.name} (DIAL-18)", loc,
                          code="ERR-V11", rule="DIAL-18")
    slot = ir.BinOp("%", pt, ir.Const(dr.ring.depth, loc), loc)
    return Element(element.points[:r] + (slot,) + element.points[r + 1:], element.intervals)
