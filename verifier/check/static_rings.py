"""Static rules and sites of the endgame dialect's barriers (specs/dialects.md DIAL-2..DIAL-8).

Reads barrier declarations and Arrive/Await statements of an endgame proc through the
`Analyzer`; checks what upstream's July 2026 compiler checks (a ring dimension on every
mbarrier, pre-arrived elements ≤ depth, Await N = 0 on mbarriers, commit-group names that match
their first sync-tl, one arrive thread count per mbarrier) and records the ring's storage sites:
the handoff of each slot at the allocation (DIAL-6) and the recycling write of each Arrive
(DIAL-7). Non-goals: one-shot counts and deadlocks (obligations, encode/ring_barriers.py).
"""

from __future__ import annotations

from dataclasses import replace

from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.lang.ir import ir
from verifier.lang.ir.printer import alloc_text, expr_text
from verifier.lang.stdlib import dialects
from verifier.lang.stdlib.endgame import ENDGAME_MECHANISMS
from verifier.lang.stdlib.memories import CudaMbarrier
from verifier.lang.stdlib.timelines import QualTL, SyncTL
from verifier.lang.stdlib.units import CollUnit, cuda_cta_in_cluster
from verifier.check.sites import BarrierDecl, Context, Element, Loop, Trailing
from verifier.check.walk_view import AnalyzerView
from verifier.semantics import rules
from verifier.semantics.rules import AccessKind


def is_endgame(an: AnalyzerView) -> bool:
    return an.model.proc.dialect == dialects.ENDGAME


def worded(an: AnalyzerView, february: str, endgame: str) -> str:
    """A rule's message in the words of the proc's dialect (upstream's tests read them; the
    rule is the same in both, DIAL-1)."""
    return endgame if is_endgame(an) else february


def is_ring(decl: BarrierDecl) -> bool:
    return decl.ring is not None and decl.mech is CudaMbarrier


def shape(s: ir.Alloc, typ: ir.BarrierType) -> tuple[tuple[int, ...], ir.Expr | None]:
    """Constant positive extents (LANG-5.3), but the logical extent of an mbarrier's ring
    dimension, an expression of sizes (DIAL-2); the physical shape holds its depth there."""
    if typ.extra_rings:  # a second ring dimension, set by set_dim_size_annotation (DIAL-18)
        raise RejectedInput(f"multiple managed ring buffer dimensions in "
                            f"{alloc_text(s)}", s.loc, code="ERR-A16",
                            rule="DIAL-2")
    out, extent = [], None
    for k, d in enumerate(typ.shape):
        if typ.ring is not None and k == typ.ring.dim and typ.mech is CudaMbarrier:
            out.append(typ.ring.depth)
            extent = d
            continue
        if not (isinstance(d, ir.Const) and isinstance(d.value, int) and d.value > 0):
            raise RejectedInput(f"barrier {s.name.name} requires constant positive extents",
                                s.loc, code="ERR-A16", rule="LANG-5.3")
        out.append(d.value)
    if typ.pre_arrive > (typ.ring.depth if typ.ring is not None else 0) and \
            typ.mech is CudaMbarrier:
        depth = typ.ring.depth if typ.ring is not None else 0
        raise RejectedInput(f"{s.name.name}: cannot have pre_arrive={typ.pre_arrive} exceed "
                            f"ring_depth={depth}", s.loc, code="ERR-L04", rule="DIAL-3")
    return tuple(out), extent


def missing_rings(an: AnalyzerView) -> None:
    """DIAL-2: in an endgame proc every mbarrier has a managed ring dimension (upstream's
    lowering requires one), reported once every Await N rule has been checked, as upstream."""
    if not is_endgame(an):
        return
    for decl in an.barrier_decls.values():
        if decl.mech is CudaMbarrier and decl.ring is None:
            raise RejectedInput(f"mbarrier {decl.sym.name} missing (non-distributed) managed "
                                "ring buffer dimension (@ ring_buffer_by)", decl.loc,
                                code="ERR-L04", rule="DIAL-2")


def await_n(an: AnalyzerView, s: ir.Await, decl: BarrierDecl) -> bool:
    """DIAL-4: an endgame mbarrier Await takes N = 0 (each element is awaited as a whole).
    True when the rule applied (February's N rules then do not)."""
    if not is_endgame(an) or decl.mech is not CudaMbarrier:
        return False
    if s.n != 0:
        raise RejectedInput(f"{decl.mech_name} requires N = 0", s.loc, code="ERR-A29",
                            rule="DIAL-4")
    return True


def commit_group_name(decl: BarrierDecl, kind: SyncTL, first: SyncTL, loc: SrcLoc) -> None:
    """DIAL-8: an endgame commit group's name fixes its kind: the first sync-tl's row must be
    the one the name says (upstream: "expects barrier mechanism ...")."""
    spelled = ENDGAME_MECHANISMS.get(decl.spelled)
    if spelled is None or spelled.commit_first is None or spelled.commit_first is kind:
        return
    expected = next(m for m in ENDGAME_MECHANISMS.values() if m.commit_first is kind)
    raise RejectedInput(f"commit group {decl.sym.name} with Arrive({first}) expects barrier "
                        f"mechanism {expected.name}", loc, code="ERR-L03", rule="DIAL-8")


def handoff(an: AnalyzerView, s: ir.Alloc, decl: BarrierDecl, ctx: Context) -> None:
    """DIAL-6: slot y of a ring (y ≥ depth on the ring dimension) is handed over by the phase
    of element y - depth: a write of storage y at the allocation, seen by nobody (qual-tl
    `slot`), tagged with arrive #0 of y - depth, so only an Await on y - depth (and what it
    synchronizes with) orders it before the accesses of y."""
    assert decl.ring is not None and decl.ring_extent is not None
    loops, points = [], []
    for k, extent in enumerate(decl.logical_shape(s.loc)):
        sym = ir.Sym.fresh(f"{decl.sym.name}.slot{k}")
        lo = decl.ring.depth if k == decl.ring.dim else 0
        loops.append(Loop(sym, ir.Const(lo, s.loc), extent, "seq", s.loc))
        points.append(ir.Var(sym, s.loc))
    tag = list(points)
    tag[decl.ring.dim] = ir.BinOp("-", points[decl.ring.dim], ir.Const(decl.ring.depth, s.loc),
                                  s.loc)
    inner = replace(ctx, loops=ctx.loops + tuple(loops))
    an.add_site(decl.sym, Element(tuple(points), tuple(None for _ in points)), AccessKind.write,
                rules.SLOT_ENTRY, False, inner, s.loc, 0, out_of_order=True,
                trailing=Trailing(decl.sym, tuple(tag), s.loc, numbered_zero=True))


def recycle(an: AnalyzerView, s: ir.Arrive, decl: BarrierDecl,
            named: tuple[tuple[ir.Expr | None, ...], ...], ctx: Context, q0: QualTL) -> None:
    """DIAL-7: an Arrive on element y of a ring reuses the slot of y - depth: a write of that
    element's storage (every access of it must be temporally ordered before), when y ≥ depth."""
    assert decl.ring is not None
    r, depth = decl.ring.dim, decl.ring.depth
    entry = rules.QualEntry(q0, frozenset({q0, QualTL.cuda2}))
    for points in named:
        pt = points[r]
        assert pt is not None, "the ring dimension is never multicast (barrier_exprs)"
        shifted = tuple(ir.BinOp("-", p, ir.Const(depth, s.loc), s.loc) if k == r else p
                        for k, p in enumerate(points))
        intervals = tuple(None if p is not None else (ir.Const(0, s.loc), ir.Const(n, s.loc))
                          for p, n in zip(points, decl.shape))
        cond = (ir.BinOp(">=", pt, ir.Const(depth, s.loc), s.loc), True)
        inner = replace(ctx, conds=ctx.conds + (cond,))
        an.add_site(decl.sym, Element(shifted, intervals), AccessKind.atomic, entry, False,
                    inner, s.loc, 98, rules.RECYCLE_ATOMIC)


def arrive_counts(an: AnalyzerView) -> None:
    """DIAL-5: every Arrive on an endgame mbarrier runs on as many threads (the mbarrier's
    expected arrival count); which threads may differ (upstream's
    consistent_arrive_thread_count; February's LANG-5.12 does not apply)."""
    first: dict[ir.Sym, tuple[int, ir.Arrive]] = {}
    for use in an.sync_uses:
        decl = an.barrier_decls[use.sym]
        if use.kind != "Arrive" or not is_ring(decl):
            continue
        count = use.ctx.tiling.box_threads
        prev = first.setdefault(use.sym, (count, use.stmt))
        if prev[0] != count:
            raise RejectedInput(f"{_arrive_text(use.stmt)} @ {decl.mech_name} has inconsistent "
                                f"thread count, {count} here, previously {prev[0]} (line "
                                f"{prev[1].loc.line})", use.stmt.loc, code="ERR-A24",
                                rule="DIAL-5")


def _arrive_text(s: ir.Arrive) -> str:
    refs = " >> ".join(f"{t.buf.name}[{', '.join(expr_text(i) for i in t.idx)}]"
                       for t in s.targets)
    return f"Arrive({s.first}) >> {refs}"


def native_unit(decl: BarrierDecl | None) -> CollUnit | None:
    """The unit that owns a barrier's distributed shards (COLL-5.9): an endgame mbarrier's
    are CTAs (upstream's CudaMbarrier.native_unit, DIAL-5), its other dimensions are arrays in
    each CTA's SMEM; February's barriers distribute every index (None)."""
    return cuda_cta_in_cluster if decl is not None and is_ring(decl) else None


def without_ring(decl: BarrierDecl | None, items: tuple[object, ...]) -> tuple[object, ...]:
    """`items` (indices or extents) without the ring dimension, which is never distributed
    (DIAL-2: COLL-5.9 deduces the distributed dimensions among the others)."""
    if decl is None or not is_ring(decl):
        return items
    assert decl.ring is not None
    return items[:decl.ring.dim] + items[decl.ring.dim + 1:]
