"""Static rules of barrier variables (language.md §5: LANG-5.2..5.21), and their sites.

Checked before any proof: mechanism legality per sync-tl and collective (LANG-5.20), Await N per
mechanism (LANG-5.9), one Arrive sync-tl / one Await sync-tl per variable (LANG-5.11), presence
of both halves (LANG-5.10), guarded-by constraints (LANG-5.15), the alternation of guard Awaits
and Arrives (LANG-5.16/5.17), ring depth (LANG-5.19) and solitary commit groups (LANG-5.21).
Home barriers, multicast and the collectives of Arrive/Await (LANG-5.5..5.7, 5.12, 5.13) are in
`barrier_exprs`.
The ring invariant SEM-6.8 follows from these (semantics.md SEM-6.8's argument); it is also
discharged on its own (encode/ring_invariant.py) and checked by the machine (rings.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from verifier import collectives
from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import CudaClusterSync, CudaCommitGroup, CudaMbarrier
from verifier.lang.stdlib.timelines import QualTL, SyncTL, implements
from verifier.lang.stdlib.units import (
    CollUnit, cuda_agnostic_sub_cta, cuda_cluster, cuda_thread, cuda_warp, cuda_warpgroup,
)
from verifier.check import alternation, barrier_exprs, static_rings, static_sm100
from verifier.semantics import rules
from verifier.check.barrier_exprs import guards
from verifier.lang.ir.guards import ring_depth
from verifier.check.sites import ArriveSite, AwaitSite, BarrierDecl, Context, Element, Trailing
from verifier.check.walk_view import AnalyzerView



@dataclass(frozen=True)
class CommitGroupRow:
    """One commit-group row of LANG-5.20: the Await's largest second sync-tl and the unit of
    Arrive and Await."""

    second: SyncTL
    unit: CollUnit


# LANG-5.20 / SEM-8.4: a commit group's kind is the first sync-tl of its Arrives.
COMMIT_GROUPS = {
    SyncTL.Sm80_cp_async: CommitGroupRow(SyncTL.cuda_in_order, cuda_thread),
    SyncTL.tma_to_gmem_async: CommitGroupRow(SyncTL.cuda_generic_and_async_proxy, cuda_warp),
    SyncTL.wgmma_async: CommitGroupRow(SyncTL.cuda_generic_and_async_proxy, cuda_warpgroup),
}


def commit_group_kind(an: AnalyzerView, sym: ir.Sym) -> SyncTL:
    """The commit-group row of `sym`: the first Arrive's sync-tl (⊑ one row), Sm80's by
    default (a variable without Arrive is ERR-A27 later)."""
    first = an.commit_group_firsts.get(sym)
    for kind in COMMIT_GROUPS:
        if first is not None and implements(first, kind):
            return kind
    return SyncTL.Sm80_cp_async


# LANG-5.21: lowered barrier types that allow one live variable per scope. A cluster sync is
# known at its declaration; a commit group's type is set by its Arrive's first sync-tl, so two
# overlapping commit groups clash only when their types agree (checked in `finish`).
LOWERED_SOLITARY = {"CudaClusterSync": "cluster_sync"}
COMMIT_GROUP_TYPES = ((SyncTL.Sm80_cp_async, "Sm80_commit_group"),
                      (SyncTL.tma_to_gmem_async, "tma_to_gmem_commit_group"),
                      (SyncTL.wgmma_async, "wgmma_commit_group"))


@dataclass
class BarrierUse:
    decl_loc: SrcLoc
    arrives: list[ir.Arrive] = field(default_factory=list)
    awaits: list[ir.Await] = field(default_factory=list)
    guard: ir.Sym | None = None


def declare(an: AnalyzerView, s: ir.Alloc, ctx: Context) -> None:
    typ = s.typ
    assert isinstance(typ, ir.BarrierType)
    if not ctx.cuda:
        raise RejectedInput(f"{s.name.name} (barrier type {typ.mech}) does not allow "
                            "allocation in a scope using cpu_basic_device", s.loc,
                            code="ERR-A05", rule="LANG-5.2")
    if not typ.mech.lowerable:
        raise RejectedInput(f"{typ.mech} not supported in CUDA device function", s.loc,
                            code="ERR-L05", rule="LANG-5.2")
    shape, ring_extent = static_rings.shape(s, typ)
    if typ.guarded_by is not None:
        other = an.barrier_decls.get(typ.guarded_by)
        if other is None or other.mech is not typ.mech:
            raise RejectedInput(f"cannot have guarded_by={typ.guarded_by.name} due to "
                                "BarrierMechanism mismatch", s.loc, code="ERR-A31",
                                rule="LANG-5.15")
        if not typ.mech.supports_guards:
            raise RejectedInput(f"cannot have guarded_by={typ.guarded_by.name} as {typ.mech} "
                                "has supports_guards=False", s.loc, code="ERR-A31",
                                rule="LANG-5.15")
        if other.guarded_by is not None or typ.guarded_by in an.guard_taken:
            raise RejectedInput(f"cannot have guarded_by={typ.guarded_by.name} as it guards "
                                "another barrier already", s.loc, code="ERR-A31",
                                rule="LANG-5.15")
        an.guard_taken.add(typ.guarded_by)
    decl = BarrierDecl(s.name, typ.mech, shape, typ.guarded_by, ctx, ctx, s.loc,
                       tuple(lp.sym for lp in ctx.loops),
                       typ.ring if ring_extent is not None else None, ring_extent,
                       typ.pre_arrive, typ.spelled)
    an.barrier_decls[s.name] = decl
    an.barrier_uses[s.name] = BarrierUse(s.loc)
    if typ.mech is CudaCommitGroup:
        an.commit_overlaps.append((decl, tuple(d for d in an.live_barriers
                                               if d.mech is CudaCommitGroup)))
    lowered = LOWERED_SOLITARY.get(typ.mech.name)
    if lowered is not None:
        live = [d for d in an.live_barriers if d.mech is typ.mech]
        if live:
            raise RejectedInput(f"Invalid \"{s.name.name}: barrier @ {typ.spelled or typ.mech}\" of lowered "
                                f"barrier type {lowered} due to another such live barrier "
                                f"\"{live[0].sym.name}\" in scope", s.loc, code="ERR-A17",
                                rule="LANG-5.21")
    an.live_barriers.append(decl)


def release(an: AnalyzerView, s: ir.Alloc, free_ctx: Context) -> None:
    decl = an.barrier_decls[s.name]
    an.barrier_decls[s.name] = replace(decl, free_ctx=free_ctx)
    an.live_barriers = [d for d in an.live_barriers if d.sym != s.name]
    an.model.barriers[s.name] = an.barrier_decls[s.name]


def arrive(an: AnalyzerView, s: ir.Arrive, ctx: Context) -> None:
    if not ctx.cuda:
        raise RejectedInput("Arrive (barrier type) does not allow SyncStmt in a scope using "
                            "cpu_basic_device", s.loc, code="ERR-A05", rule="LANG-4.3")
    if not s.targets:
        raise RejectedInput("missing >> trailing barrier exprs", s.loc, code="ERR-A26",
                            rule="LANG-5.6")
    names = {t.buf for t in s.targets}
    if len(names) > 1:
        both = " and ".join(sorted(n.name for n in names))
        raise RejectedInput(static_rings.worded(
            an, "cannot arrive on different queue barrier arrays",
            f"cannot arrive on different barrier variables {both}"), s.loc,
            code="ERR-A26", rule="LANG-5.6")
    sym = s.targets[0].buf
    decl = an.barrier_decls[sym]
    home = barrier_exprs.arrive_home(an, s, decl, ctx)
    same_sync_tl(an, sym, s)
    _mechanism_rules(an, decl, s.first, None, ctx, s.loc, arrive=True)
    on_behalf = rules.commit_on_behalf(s, ctx.tiling, decl.shape)
    if not on_behalf:  # BW-5.5: an on-behalf commit's barrier is deduced from the Await side
        an.note_use(sym, ctx, static_rings.without_ring(decl, tuple(ir.Point(h, s.loc)
                                                                    for h in home)))
    an.barrier_uses[sym].arrives.append(s)
    # the Arrive reads the mbarrier storage (sub-position 99) before it witnesses (100), so its
    # own storage read is among the records it witnesses, as in the machine (SEM-6.2, 6.3)
    named = barrier_exprs.named_elements(s, decl, home)
    site = ArriveSite(an.fresh_id(), sym, s.first, home, replace(ctx, path=ctx.path + (100,)),
                      s.loc, named, on_behalf,
                      rules.commit_each_element(s, ctx.tiling, decl.shape))
    an.model.arrives.append(site)
    if decl.mech is CudaMbarrier:
        sm80 = QualTL.Sm80 in rules.SYNC_SETS[s.first].full
        for points in named:  # SEM-6.2: the storage of every element it names, released by
            # this arrive itself whatever its first sync-tl witnesses (as a trailing barrier)
            storage_read(an, sym, points, ctx, s.loc, QualTL.Sm80 if sm80 else QualTL.cuda2,
                         decl.shape, decl.ring is None, Trailing(sym, points, s.loc))
        if static_rings.is_ring(decl):
            static_rings.recycle(an, s, decl, named, ctx, QualTL.Sm80 if sm80 else QualTL.cuda2)


def same_sync_tl(an: AnalyzerView, sym: ir.Sym, s: ir.Arrive | ir.Await) -> None:
    """Every Arrive (Await) on a barrier has the first one's sync-tl (ERR-A28), checked as each
    is met, before its mechanism's rules, as upstream does; both statements are named, as in
    upstream's message. Rules: LANG-5.11"""
    use = an.barrier_uses[sym]
    what, stmts, tl = ("Arrive", use.arrives, "first") if isinstance(s, ir.Arrive) else \
        ("Await", use.awaits, "second")
    if stmts and getattr(s, tl) != getattr(stmts[0], tl):
        raise RejectedInput(f"incompatible sync-tl ({getattr(s, tl)}) with previous {what} "
                            f"{barrier_exprs._text(stmts[0])} at line {stmts[0].loc.line} "
                            f"(here: {barrier_exprs._text(s)})", s.loc, code="ERR-A28",
                            rule="LANG-5.11")


def await_(an: AnalyzerView, s: ir.Await, ctx: Context) -> None:
    if not ctx.cuda:
        raise RejectedInput("Await (barrier type) does not allow SyncStmt in a scope using "
                            "cpu_basic_device", s.loc, code="ERR-A05", rule="LANG-4.3")
    sym = s.target.buf
    decl = an.barrier_decls[sym]
    mech = decl.mech
    if static_rings.await_n(an, s, decl):
        pass
    elif mech is CudaMbarrier and s.n >= 0:
        raise RejectedInput("CudaMbarrier requires N < 0 (e.g. N = ~0)", s.loc,
                            code="ERR-A29", rule="LANG-5.9")
    if mech is CudaCommitGroup and s.n < 0:
        raise RejectedInput(f"{decl.mech_name} requires N >= 0", s.loc, code="ERR-A29",
                            rule="LANG-5.9")
    if mech is CudaClusterSync and s.n != 0:
        raise RejectedInput(f"{decl.mech_name} requires N = 0", s.loc, code="ERR-A29",
                            rule="LANG-5.9")
    previous = an.barrier_uses[sym].awaits
    if mech is CudaMbarrier and previous and previous[0].n != s.n and decl.ring is None:
        raise RejectedInput("incompatible N (CudaMbarrier uniform-N requirement)", s.loc,
                            code="ERR-A29", rule="LANG-5.9")
    element = barrier_exprs.await_element(an, s, decl, ctx)
    same_sync_tl(an, sym, s)
    _mechanism_rules(an, decl, None, s.second, ctx, s.loc, arrive=False)
    an.note_use(sym, ctx, static_rings.without_ring(decl, s.target.idx), awaits=True)
    an.barrier_uses[sym].awaits.append(s)
    an.model.awaits.append(AwaitSite(an.fresh_id(), sym, s.second, s.n, element, ctx, s.loc))
    if mech is CudaMbarrier:
        storage_read(an, sym, element, ctx, s.loc, QualTL.cuda2, decl.shape, decl.ring is None)


def storage_read(an: AnalyzerView, sym: ir.Sym, element: tuple[ir.Expr | None, ...],
                 ctx: Context, loc: SrcLoc, q0: QualTL, shape: tuple[int, ...] = (),
                 conv: bool = True, trailing: Trailing | None = None) -> None:
    """SEM-6.2: Arrive/Await read the mbarrier's storage (in order; convergent, but each
    thread's own on an endgame ring, DIAL-6); None in `element` is a multicast dimension
    (every element of it)."""
    entry = rules.QualEntry(q0, frozenset({q0, QualTL.cuda2}))
    intervals = tuple(None if e is not None else (ir.Const(0, loc), ir.Const(n, loc))
                      for e, n in zip(element, shape or (0,) * len(element)))
    an.add_site(sym, Element(element, intervals), rules.AccessKind.read, entry, conv, ctx,
                loc, 99, trailing=trailing)


def _mechanism_rules(an: AnalyzerView, decl: BarrierDecl, first: SyncTL | None,
                     second: SyncTL | None, ctx: Context, loc: SrcLoc, arrive: bool) -> None:
    """LANG-5.20 legality of sync-tls and collectives per mechanism."""
    assert ctx.device is not None
    dev = ctx.device.cfg
    name = decl.sym.name
    if decl.mech is CudaCommitGroup:
        kind = commit_group_kind(an, decl.sym)
        row = COMMIT_GROUPS[kind]
        if first is not None and not any(implements(first, k) for k in COMMIT_GROUPS):
            raise RejectedInput(f"{name} does not support Arrive({first}) (wrong first sync-tl)",
                                loc, code="ERR-L03", rule="LANG-5.20")
        if first is not None:
            static_rings.commit_group_name(decl, kind, first, loc)
        if second is not None and not implements(second, row.second):
            raise RejectedInput(f"commit group {name} with Arrive({kind}) expects "
                                f"Await({row.second}), not {second} (wrong second sync-tl)",
                                loc, code="ERR-L03", rule="LANG-5.20")
        problem = collectives.matches_unit(ctx.tiling, row.unit, dev)
        if problem is not None:
            what = "Arrive" if arrive else "Await"
            raise RejectedInput(f"{what} of CudaCommitGroup {name} with Arrive({kind}) "
                                f"expects collective unit {row.unit}: {problem}", loc,
                                code="ERR-L03", rule="LANG-5.20")
    elif decl.mech is CudaMbarrier:
        if first is not None and not static_sm100.mbarrier_arrive(first, ctx, loc):
            ok = implements(first, SyncTL.cuda_in_order) or \
                implements(first, SyncTL.Sm80_cp_async)
            if not ok:
                raise RejectedInput(f"mbarrier Arrive sync-tl {first} not supported: use "
                                    "cuda_temporal, and add trailing barriers to TMA instrs",
                                    loc, code="ERR-L04", rule="LANG-5.20")
            problem = collectives.matches_unit(ctx.tiling, cuda_agnostic_sub_cta, dev)
            if problem is not None:
                raise RejectedInput(f"{name} must be distributed so each mbarrier is resident "
                                    f"in 1 CTA only ({decl.mech_name} requires "
                                    f"cuda_agnostic_sub_cta): {problem}", loc, code="ERR-L04",
                                    rule="LANG-5.14")
        if second is not None and not static_sm100.mbarrier_await(second):
            sets = rules.SYNC_SETS[second]
            if not implements(second, SyncTL.cuda_generic_and_async_proxy) or \
                    QualTL.Sm80 in sets.temporal:
                remark = "consider cuda_generic_and_async_proxy" \
                    if second is SyncTL.wgmma_async else \
                    "Sm80_cp_async not supported in second sync-tl; use cuda_in_order" \
                    if QualTL.Sm80 in sets.temporal else "at most cuda_generic_and_async_proxy"
                raise RejectedInput(f"mbarrier Await sync-tl {second} not supported ({remark})",
                                    loc, code="ERR-L04", rule="LANG-5.20")
    elif decl.mech is CudaClusterSync:
        if first is not None and not implements(first, SyncTL.Sm80_generic):
            raise RejectedInput(f"CudaClusterSync {name}: Arrive sync-tl {first} not supported "
                                "(we allow Sm80_generic)", loc, code="ERR-L02", rule="LANG-5.20")
        if second is not None and (not implements(second, SyncTL.cuda_generic_and_async_proxy)
                                   or QualTL.Sm80 in rules.SYNC_SETS[second].temporal):
            raise RejectedInput(f"CudaClusterSync {name}: Await sync-tl {second} not supported "
                                "(at most cuda_generic_and_async_proxy, no Sm80_cp_async)", loc,
                                code="ERR-L02", rule="LANG-5.20")
        problem = collectives.matches_unit(ctx.tiling, cuda_cluster, dev)
        if problem is not None:
            what = "Arrive" if arrive else "Await"
            raise RejectedInput(f"{what} for {name} must be by full cluster" + static_rings.worded(
                an, "", " (Missing threads to match cuda_cluster)") + f": {problem}", loc,
                                code="ERR-L02", rule="COLL-3.2")


def finish(an: AnalyzerView) -> None:
    """Per-variable rules once every use is known (LANG-5.10, 5.11, 5.16-5.19)."""
    decls = an.model.barriers
    for sym, use in an.barrier_uses.items():
        decl = decls.get(sym) or an.barrier_decls[sym]
        if not use.arrives or not use.awaits:
            z = sym.name
            missing = f"Arrive(...) >> {z} and Await({z}, ...)" if not (use.arrives or use.awaits) \
                else f"Arrive(...) >> {z}" if not use.arrives else f"Await({z}, ...)"
            raise RejectedInput(f"missing {missing} for {z}", decl.loc, code="ERR-A27",
                                rule="LANG-5.10")
    static_rings.missing_rings(an)
    _solitary_commit_groups(an)
    barrier_exprs.multicast_patterns(an)
    # LANG-5.15..5.19 (guards, ring depth from lags, alternation) are February's (DIAL-1)
    mbar = {s: d for s, d in decls.items() if d.mech is CudaMbarrier and d.ring is None and
            not static_rings.is_endgame(an)}
    guard = guards(mbar)
    lags = {sym: ~an.barrier_uses[sym].awaits[0].n for sym in mbar}
    for sym, decl in mbar.items():
        if ring_depth(sym, guard, lags) <= 0:
            raise RejectedInput(f"{'; '.join(_guard_cycle(sym, guard))} must have some await "
                                "with nonzero skips (e.g. set N = ~1)", decl.loc, code="ERR-L04",
                                rule="LANG-5.19")
    errors = []
    checks = [(sym, guard[sym], False) for sym in mbar]
    checks += [(sym, sym, True) for sym, d in decls.items() if d.mech is CudaClusterSync]
    for sym, g, arrive_first in checks:
        try:
            alternation.check(an.alloc_lists[sym], decls[sym].loc, g, sym, arrive_first)
        except RejectedInput as e:
            errors.append(e)
    if errors:  # report the first violation in the text
        raise min(errors, key=lambda e: (e.loc.line, e.loc.col))


def _commit_group_type(an: AnalyzerView, sym: ir.Sym) -> str | None:
    arrives = an.barrier_uses[sym].arrives
    first = arrives[0].first if arrives else None
    return next((name for tl, name in COMMIT_GROUP_TYPES
                 if first is not None and implements(first, tl)), None)


def _solitary_commit_groups(an: AnalyzerView) -> None:
    """LANG-5.21: a commit group declared while another of the same lowered type is live."""
    for decl, live in an.commit_overlaps:
        lowered = _commit_group_type(an, decl.sym)
        clash = [d for d in live if lowered and _commit_group_type(an, d.sym) == lowered]
        if clash:
            raise RejectedInput(f"Invalid \"{decl.sym.name}: barrier @ {decl.mech_name}\" of lowered "
                                f"barrier type {lowered} due to another such live barrier "
                                f"\"{clash[0].sym.name}\" in scope", decl.loc, code="ERR-A17",
                                rule="LANG-5.21")


def _guard_cycle(sym: ir.Sym, guard: dict[ir.Sym, ir.Sym]) -> list[str]:
    """The names of the mbarriers whose Awaits make up `sym`'s ring (LANG-5.19): it, the one
    guarding it, the one guarding that, ... back to it, as upstream names them."""
    names, g = [sym.name], guard.get(sym, sym)
    while g != sym and g.name not in names and g in guard:
        names.append(g.name)
        g = guard[g]
    return names

