"""Early releases (CG-R1): the SEM-4.7 free check of a shared-memory variable proved at a
point before the end of its block, so that codegen may reuse its storage from there on.

Runs after a proc is proved, on the same solver session: each candidate (`lang/ir/lifetimes.py`)
gets the hazard obligations of the end-of-scope free, with the free moved to the candidate
point (`ObligationBuilder.releases`). A release is proved when all of them, and every premise
their closed forms relied on, are unsat. A candidate counterexample is replayed by the concrete
machine with the release checks switched on (`run_machine(..., releases=True)`); replayed or
not, a failed release is a codegen fact (the storage stays to the end of the scope), never a
finding against the proc, whose verdict the spec's end-of-scope free decides.
Non-goals: the layout itself (codegen/plan.py).
"""

from __future__ import annotations

import time
from typing import Protocol

from verifier.diagnostics import SporkError
from verifier.lang.ir import ir
from verifier.results import ObligationResult, ObligationStatus, ReleaseResult, RELEASE_PROVED
from verifier.encode.obligations import Obligation, ObligationBuilder
from verifier.encode.solver import Outcome, Status
from verifier.lang.ir.lifetimes import RELEASE_PREFIX


class Solving(Protocol):
    """What this module needs of verify's run: the proc, its builder, refinement."""

    proc: ir.Proc
    builder: ObligationBuilder
    premises_seen: set[int]

    def solve(self, ob: Obligation) -> tuple[Outcome | None, tuple[int, bool], int, set[int]]:
        ...

    def prefetch(self, obligations: list[Obligation]) -> None:
        ...


def early_releases(run: Solving, prune: bool) -> tuple[ReleaseResult, ...]:
    """Every candidate's result, in the model's order (CG-R1)."""
    model = run.builder.model
    if not model.releases:
        return ()
    try:
        obligations = run.builder.releases(prune)
    except SporkError as e:  # a part outside the encoding: no release, verdict untouched
        return tuple(ReleaseResult(r.id, r.site.buf.name, r.site.loc, False,
                                   f"not encoded: {e.message}") for r in model.releases)
    run.prefetch(obligations)  # with workers (--jobs), every first query starts at once
    groups: dict[str, list[Obligation]] = {r.id: [] for r in model.releases}
    for ob in obligations:
        groups[ob.release].append(ob)
    return tuple(_release(run, r.id, r.site.buf.name, r.site.loc, groups[r.id])
                 for r in model.releases)


def _release(run: Solving, rid: str, variable: str, loc: object,
             obligations: list[Obligation]) -> ReleaseResult:
    """Solve one release's obligations in order, then the premises they relied on; the first
    one not proved decides (the rest are not solved: the release already fails)."""
    results: list[ObligationResult] = []
    pending = list(obligations)
    premises: set[int] = set()
    while pending:
        ob = pending.pop(0)
        t0 = time.perf_counter()
        try:
            outcome, _, used, relied = run.solve(ob)
        except SporkError as e:
            return ReleaseResult(rid, variable, loc, False,  # type: ignore[arg-type]
                                 f"{ob.id}: not encoded: {e.message}", tuple(results))
        status, why = _judge(run, ob, outcome)
        results.append(ObligationResult(
            ob.id, ob.rule, ob.kind, status, time.perf_counter() - t0,
            outcome.query_hash if outcome else "", ob.description, used,
            ob.discharged_by if outcome is None else "",
            outcome.stopped_by if outcome else "", outcome.text if outcome else ""))
        if status is not ObligationStatus.proved:
            return ReleaseResult(rid, variable, loc, False, why,  # type: ignore[arg-type]
                                 tuple(results))
        for key in sorted(relied - run.premises_seen - premises):
            premises.add(key)
            premise = run.builder.premise(key)
            premise.id = RELEASE_PREFIX + premise.id
            pending.append(premise)
    return ReleaseResult(rid, variable, loc, True, "", tuple(results))  # type: ignore[arg-type]


def _judge(run: Solving, ob: Obligation, outcome: Outcome | None
           ) -> tuple[ObligationStatus, str]:
    """Proved, or not with the reason quoted to the user: a candidate is replayed on the
    machine with the release checks on, and called a hazard only when it reproduces."""
    if outcome is None or outcome.status is Status.proved:
        return ObligationStatus.proved, ""
    where = f"{ob.id.removeprefix(RELEASE_PREFIX)}"
    if outcome.status is Status.unknown or outcome.model is None:
        return ObligationStatus.unknown, f"{where}: the solver returned unknown " \
            f"({outcome.reason or outcome.stopped_by})"
    sizes = {name: outcome.model[name] for name in run.builder.size_names}
    target = (ob.kind, ob.variable, ob.loc)
    from verifier.semantics.run import run_machine  # only a candidate's replay needs it

    holds, found = run_machine(run.proc, sizes, collect_all=True, stop_at=target,
                               only=frozenset({ob.variable}), releases=True)
    at = ", ".join(f"{k}={v}" for k, v in sizes.items())
    hit = [f for f in found if (f.kind, f.variable, f.loc) == target] if holds else []
    if not hit:
        return ObligationStatus.unknown, f"{where}: a {ob.kind} candidate at {at} that the " \
            "concrete machine does not reproduce (not claimed)"
    f = hit[0]
    lacking = f": {f.lacking}" if f.lacking else ""
    return ObligationStatus.refuted, f"{where}: {f.message}{lacking} at {at} (replayed on " \
        "the concrete machine)"


def release_outcome(r: ReleaseResult) -> str:
    """The certificate's word on a release: `proved`, or why not."""
    return RELEASE_PROVED if r.proved else f"not proved: {r.reason}"


def release_evidence(releases: tuple[ReleaseResult, ...]) -> tuple[tuple[str, str], ...]:
    """The (id, query hash) of every obligation of a proved release (the certificate's)."""
    return tuple((o.id, o.query_hash or o.discharged_by) for r in releases if r.proved
                 for o in r.obligations)


__all__ = ["early_releases", "release_evidence", "release_outcome"]
