"""Barrier expressions and the thread collectives of barrier statements (language.md §5.3, 5.5).

Reads each `Arrive`/`Await` with its scope (`Context`, the enclosing statements) through the
`Analyzer`; checks the home barrier of an Arrive (LANG-5.6, ERR-A26), where multicast intervals
may appear (LANG-5.5, 5.7, ERR-A30), the multicast rules of COLL-5.10 / LANG-5.13 (ERR-A24:
intervals `0:extent`, convergence, CTA-in-cluster pitch), and, once the walk is done, that the
statements of each barrier variable are executed by consistent collectives (LANG-5.12, COLL-5.10,
ERR-A24) using the collective algebra's raw-mode base equivalence (COLL-1.15).
Non-goals: sync-tl and mechanism legality, Await N, alternation (static_barriers); index
consumption (distributed-memory deduction, COLL-5.9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verifier import collectives
from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.lang.ir.guards import guard_map
from verifier.lang.stdlib.memories import CudaCommitGroup, CudaMbarrier
from verifier.lang.ir.printer import expr_text, stmt_lines
from verifier.lang.stdlib.timelines import SyncTL, implements
from verifier.check.sites import BarrierDecl, Context
from verifier.check.static_rings import worded
from verifier.check.walk_view import AnalyzerView
from verifier.semantics import rules



@dataclass(frozen=True)
class SyncUse:
    """One Arrive or Await on a barrier variable, in program order."""

    kind: str  # "Arrive" | "Await"
    sym: ir.Sym
    stmt: ir.Arrive | ir.Await
    ctx: Context
    multicast: tuple[tuple[bool, ...], ...] = ()
    index: tuple[ir.Expr, ...] = ()  # the home element's points (an Await's element)


def arrive_home(an: AnalyzerView, s: ir.Arrive, decl: BarrierDecl, ctx: Context
                ) -> tuple[ir.Expr, ...]:
    """The home barrier's points (LANG-5.6, ERR-A26) after the multicast rules; records the
    Arrive for the per-variable checks."""
    refs = s.targets
    multicast = tuple(tuple(_casts_wider(a, extent) for a, extent in zip(r.idx, decl.shape))
                      for r in refs)
    home: list[ir.Expr] = []
    ring = decl.ring.dim if decl.ring is not None else None
    for i in range(len(decl.shape)):
        points = [r.idx[i].pt for r in refs if isinstance(r.idx[i], ir.Point)]
        if i == ring:
            home.append(_ring_point(s, refs, i))
            continue
        if not points:
            raise RejectedInput(f"{_text(s)}: at least one trailing barrier expression must have "
                                f"idx[{i}] be a point, not an interval", s.loc, code="ERR-A26",
                                rule="LANG-5.6")
        if len(refs) > 1:
            for pt in points:
                if not isinstance(pt, ir.Var):
                    raise RejectedInput(f"{_text(s)}: expected a plain variable, not "
                                        f"{expr_text(pt)}", s.loc, code="ERR-A26",
                                        rule="LANG-5.6")
            for pt in points[1:]:
                assert isinstance(pt, ir.Var) and isinstance(points[0], ir.Var)
                if pt.name != points[0].name:
                    raise RejectedInput(f"{_text(s)}: {pt.name.name} mismatches idx[{i}] in "
                                        "previous trailing barrier expressions", s.loc,
                                        code="ERR-A26", rule="LANG-5.6")
        home.append(points[0])
    if any(any(m) for m in multicast):
        _multicast(an, s, decl, ctx, home)
    an.sync_uses.append(SyncUse("Arrive", decl.sym, s, ctx, multicast, tuple(home)))
    return tuple(home)


def _ring_point(s: ir.Arrive, refs: tuple[ir.BarrierRef, ...], i: int) -> ir.Expr:
    """The index of an Arrive's barrier expressions on a ring dimension: a point, the same in
    every expression (an interval there is upstream's "cannot have interval on managed ring
    buffer dimension"). Rules: DIAL-2"""
    for r in refs:
        if not isinstance(r.idx[i], ir.Point):
            raise RejectedInput(f"{_text(s)}: cannot have interval {expr_text(r.idx[i])} on "
                                "managed ring buffer dimension", s.loc, code="ERR-A26",
                                rule="DIAL-2")
    first = refs[0].idx[i]
    assert isinstance(first, ir.Point)
    for r in refs[1:]:
        if expr_text(r.idx[i]) != expr_text(first):
            raise RejectedInput(f"{_text(s)}: {expr_text(r.idx[i])} mismatches idx[{i}] in "
                                "previous trailing barrier expressions", s.loc,
                                code="ERR-A26", rule="LANG-5.6")
    return first.pt


def named_elements(s: ir.Arrive, decl: BarrierDecl, home: tuple[ir.Expr, ...]
                   ) -> tuple[tuple[ir.Expr | None, ...], ...]:
    """Per barrier expression of the Arrive: a point per dimension, None where it multicasts
    (an interval `0:1` over an extent-1 dimension names the home's own element). SEM-6.1"""
    out = []
    for ref in s.targets:
        out.append(tuple(None if _casts_wider(a, extent) else h
                         for a, extent, h in zip(ref.idx, decl.shape, home)))
    return tuple(dict.fromkeys(out))


def await_element(an: AnalyzerView, s: ir.Await, decl: BarrierDecl, ctx: Context
                  ) -> tuple[ir.Expr, ...]:
    """An Await names one element: points only (ERR-A30). Rules: LANG-5.5"""
    if decl.ring is not None and isinstance(s.target.idx[decl.ring.dim], ir.Interval):
        raise RejectedInput(f"{_text(s)}: cannot have interval "
                            f"{expr_text(s.target.idx[decl.ring.dim])} on managed ring buffer "
                            "dimension", s.loc, code="ERR-A30", rule="DIAL-2")
    if any(isinstance(a, ir.Interval) for a in s.target.idx):
        raise RejectedInput(worded(an, f"{_text(s)}: multicast is for Arrive, not Await",
                                   f"Unsupported multicast in {_text(s)}; multicast is for "
                                   "Arrive, not Await"), s.loc, code="ERR-A30", rule="LANG-5.5")
    element = tuple(a.pt for a in s.target.idx if isinstance(a, ir.Point))
    an.sync_uses.append(SyncUse("Await", decl.sym, s, ctx, index=element))
    return element


def _multicast(an: AnalyzerView, s: ir.Arrive, decl: BarrierDecl, ctx: Context,
               home: list[ir.Expr]) -> None:
    """LANG-5.7 (mechanism, ERR-A30), LANG-5.20 (no cp.async multicast, ERR-L04), COLL-5.10 /
    LANG-5.13 (ERR-A24)."""
    assert ctx.device is not None
    if not decl.mech.multicast:
        raise RejectedInput(worded(an, f"{_text(s)}: {decl.mech} does not support multicast",
                                   f"Unsupported multicast in {_text(s)}; {decl.mech_name} "
                                   "does not support multicast"), s.loc,
                            code="ERR-A30", rule="LANG-5.7")
    # BW-5.5: tcgen05.commit takes a multicast mask (.multicast::cluster)
    if decl.mech is CudaMbarrier and not implements(s.first, SyncTL.cuda_in_order) and \
            s.first is not SyncTL.tcgen05_commit:
        raise RejectedInput(f"{_text(s)}: Sm80_cp_async mbarrier must be within 1 CTA (no "
                            "multicast)", s.loc, code="ERR-L04", rule="LANG-5.20")
    block = ctx.device.cfg.blockDim
    for i, extent in enumerate(decl.shape):
        intervals = [a for r in s.targets for a in r.idx[i:i + 1] if isinstance(a, ir.Interval)]
        if not intervals:
            continue
        for a in intervals:
            if _const(a.lo) != 0 or _const(a.hi) != extent:
                raise RejectedInput(f"{_text(s)}: Expected idx[{i}] to be 0:{extent}, not "
                                    f"{expr_text(a)}", s.loc, code="ERR-A24", rule="COLL-5.10")
        it = home[i]
        assert isinstance(it, ir.Var)
        _convergent(an, s, it.name)
        guard = ctx.tiling.guard_of(it.name)
        if guard is not None and guard.thread_pitch % block != 0:
            # endgame: such a dimension is an array in one CTA's SMEM (DIAL-5), upstream's words
            within = " (Cannot multicast on non-distributed dimension, i.e. cannot multicast " \
                "across mbarriers in the same CTA)" if decl.ring is not None else ""
            raise RejectedInput(f"{_text(s)}: multicasted {it.name.name}: thread_pitch "
                                f"{guard.thread_pitch} not divisible by blockDim ({block}); "
                                f"cannot be multicast{within}", s.loc, code="ERR-A24",
                                rule="LANG-5.13")


def _convergent(an: AnalyzerView, s: ir.Arrive, it: ir.Sym) -> None:
    """No `if` or `seq` loop between the multicast iterator's loop and the Arrive (ERR-A24).

    Rules: LANG-5.13, COLL-5.10"""
    inside = False
    for st in an.stack:
        if st is s:
            break
        if not inside:
            inside = isinstance(st, ir.For) and st.iter == it
            continue
        why = None
        if isinstance(st, ir.If):
            why = f"if {expr_text(st.cond)}"
        elif isinstance(st, ir.For) and isinstance(st.mode, ir.Seq):
            why = f"for {st.iter.name} in seq({expr_text(st.lo)}, {expr_text(st.hi)})"
        if why is not None:
            raise RejectedInput(f"multicasted {it.name} fails convergence requirement due to "
                                f"`{why}` at line {st.loc.line} (SyncStmt: {_text(s)})", s.loc,
                                code="ERR-A24", rule="LANG-5.13")


def multicast_patterns(an: AnalyzerView) -> None:
    """All Arrives on a variable use the same multicast pattern (ERR-A28). Rules: LANG-5.11"""
    first: dict[ir.Sym, SyncUse] = {}
    for use in an.sync_uses:
        if use.kind != "Arrive":
            continue
        prev = first.setdefault(use.sym, use)
        if prev.multicast != use.multicast:
            raise RejectedInput(f"incompatible multicasts with previous Arrive {_text(prev.stmt)} "
                                f"at line {prev.stmt.loc.line}", use.stmt.loc, code="ERR-A28",
                                rule="LANG-5.11")


def check_collectives(an: AnalyzerView) -> None:
    """LANG-5.12 / COLL-5.10 in program order: every Arrive (Await) on z has the base collective
    of the first one; an mbarrier Arrive on z that of the first Await on guardedBy(z) (and an
    Await on g that of the first Arrive on the barrier g guards); a commit-group Arrive that of
    the first Await on z and vice versa. Raw mode of COLL-1.15 (ERR-A24); an algebraic match is
    confirmed on the guards (ERR-V08)."""
    decls = {**an.barrier_decls, **an.model.barriers}
    guard_of = guards({z: d for z, d in decls.items() if d.mech is CudaMbarrier})
    first: dict[tuple[ir.Sym, str], SyncUse] = {}
    for use in an.sync_uses:
        mech = decls[use.sym].mech
        if decls[use.sym].ring is not None:
            continue  # endgame rings: one arrive thread count instead (DIAL-5)
        checks: list[tuple[SyncUse | None, str, bool]] = []  # (use, its text, guard pair)
        prev = first.setdefault((use.sym, use.kind), use)
        if prev is not use:
            checks.append((prev, _text(prev.stmt), False))
        partners = [z for z, g in guard_of.items() if g == use.sym] if use.kind == "Await" \
            else []
        if _on_behalf(use, decls) or any(_on_behalf(first.get((z, "Arrive")), decls)
                                         for z in partners):
            pass  # BW-5.5: one thread's multicast commit arrives on behalf of every CTA it names
        elif mech is CudaMbarrier and use.kind == "Arrive":
            g = guard_of[use.sym]
            checks.append((first.get((g, "Await")), f"Await({g.name}, ...) [guarded_by]", True))
        elif mech is CudaMbarrier:
            for z in (z for z, g in guard_of.items() if g == use.sym):
                checks.append((first.get((z, "Arrive")), f"Arrive(...) >> {z.name} [guards]",
                               True))
        elif mech is CudaCommitGroup:
            other = "Await" if use.kind == "Arrive" else "Arrive"
            what = f"Await({use.sym.name}, ...)" if other == "Await" else \
                f"Arrive(...) >> {use.sym.name}"
            checks.append((first.get((use.sym, other)),
                           f"{what} [different_arrive_await_threads=False]", False))
        for old, what, pair in checks:
            if old is None:
                continue
            reason = collectives.base_mismatch(old.ctx.tiling, use.ctx.tiling, subdiv_only=False)
            if reason is not None:
                # endgame finds a commit group's thread mismatch in its distributed memory
                head = f"Distributed memory deduction for {use.sym.name} failed: " \
                    if mech is CudaCommitGroup else ""
                raise RejectedInput(worded(an, "", head) +
                                    f"{_text(use.stmt)} has inconsistent collective tiling with "
                                    f"previous {what} at line {old.stmt.loc.line}: {reason}",
                                    use.stmt.loc, code="ERR-A24", rule="LANG-5.12")
            if pair:
                _same_pitches(old, use, what)
            assert use.ctx.device is not None
            try:
                collectives.confirm_same_base(old.ctx.tiling, use.ctx.tiling,
                                              use.ctx.device.cfg)
            except RejectedInput as err:
                err.loc = use.stmt.loc
                raise


def _on_behalf(use: SyncUse | None, decls: dict[ir.Sym, BarrierDecl]) -> bool:
    """A tcgen05.commit on behalf of other CTAs (BW-5.5): one thread arrives for the CTAs whose
    barriers it names (its operand is a shared::cluster address); the Awaits of those
    barriers are other collectives, so LANG-5.12's pairing of Arrive and Await collectives
    does not apply (the ring lemma gives such sites nothing: every candidate is replayed)."""
    return use is not None and use.kind == "Arrive" and \
        rules.commit_on_behalf(use.stmt, use.ctx.tiling, decls[use.sym].shape)


def _pitches(use: SyncUse) -> list[tuple[str, int]]:
    """(iterator, thread pitch) of each index of the element a barrier statement names."""
    out = []
    for e in use.index:
        guard = use.ctx.tiling.guard_of(e.name) if isinstance(e, ir.Var) else None
        out.append((expr_text(e), 0 if guard is None else guard.thread_pitch))
    return out


def _same_pitches(old: SyncUse, use: SyncUse, what: str) -> None:
    """An mbarrier Arrive on z and the Awaits on guardedBy(z) are one thread collective's
    pair, so they index with the same thread pitches (upstream dev26: the Arrive and Await
    sides are deduced apart, COLL-5.14, and tied here). Rules: COLL-5.14"""
    for (n1, p1), (n2, p2) in zip(_pitches(old), _pitches(use)):
        if p1 != p2:
            raise RejectedInput(f"{_text(use.stmt)} has inconsistent thread pitch with previous "
                                f"{what} at line {old.stmt.loc.line}: {n1}.thread_pitch ({p1}) "
                                f"!= {n2}.thread_pitch ({p2})", use.stmt.loc, code="ERR-A24",
                                rule="COLL-5.14")


def guards(mbar: dict[ir.Sym, BarrierDecl]) -> dict[ir.Sym, ir.Sym]:
    """guardedBy(z) for every mbarrier variable (LANG-5.15), declarations in order."""
    return guard_map({s: d.guarded_by for s, d in mbar.items()})


def _casts_wider(a: ir.Access, extent: Any) -> bool:
    """Whether an index of an Arrive's barrier expression multicasts: an interval, except
    `0:1` over a dimension of extent 1, which names only the arriving CTA's own element
    (a 1x1 cluster; LANG-5.7), as its point would."""
    if not isinstance(a, ir.Interval):
        return False
    return not (extent == 1 and _const(a.lo) == 0 and _const(a.hi) == 1)


def _const(e: ir.Expr) -> Any:
    return e.value if isinstance(e, ir.Const) else None


def _text(s: ir.Stmt) -> str:
    return stmt_lines(s, 0)[0].strip()
