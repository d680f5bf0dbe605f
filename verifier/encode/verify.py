"""Verify one proc: static checks → obligations → Z3 → replay on the machine → verdict.

A sat answer is only a candidate: it is replayed by the concrete machine at the model's sizes
and reported as `refuted` only with the machine's own confirmed finding. A candidate the
machine does not reproduce makes the obligation `unknown`, never `refuted` or `proved`.
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import itertools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import z3

from verifier import __version__
from verifier.diagnostics import RejectedInput, SporkError, Unsupported
from verifier.lang.ir import ir
from verifier.lang.rewrite.inline import inlined_callees
from verifier.lang.ir.printer import ir_hash
from verifier.results import (
    Certificate, Counterexample, Finding, FindingKind, ObligationResult, ObligationStatus,
    ProcResult, Related, Verdict,
)
from verifier.check import analyze
from verifier.check.analysis_remarks import log_analysis
from verifier.collectives.symbolic import fresh_context
from verifier.semantics.report_finding import machine_finding
from verifier.semantics.state import Finding as MachineFinding
from verifier.encode.assumptions import check_assumed_names
from verifier.encode.discharge import Discharger
from verifier.encode.obligations import Built, Obligation, ObligationBuilder
from verifier.encode.proof_cache import KeyUnavailable, ProofCache
from verifier.encode.vacuity import Undecided, vacuity
from verifier.encode.solver import (
    DEFAULT_RLIMIT, QUANTIFIED_RLIMIT, REUSE_RLIMIT, SOLVER_NAME, WALL_NET_S, Outcome, Query,
    Status, evaluate, prepare,
)
from verifier.encode.visibility import ANCHORED_FALLBACK
from verifier.encode.releases import early_releases, release_evidence, release_outcome
from verifier.encode.replays import (
    Replays, cost, replay, replay_first, run_machine, seen,
)


@dataclass
class Options:
    timeout_s: float = WALL_NET_S  # wall-clock safety net per query (the budget is rlimit)
    # assumed sizes (`--assume`, CLI-11): extra preconditions `NAME == VALUE`, the other sizes
    # stay symbolic; the certificate binds them. Fixing every size proves one size.
    fixed_sizes: dict[str, int] | None = None
    # fixed_sizes name one size to check, not assumptions: only VAC-1 is asked (VAC-2 would
    # call a size where nothing runs vacuous, where the concrete machine finds no hazard)
    point: bool = False
    jobs: int = 1  # worker processes solving queries (results identical for every N)
    cache_dir: Path | None = None  # on-disk proof cache (None: this process's memory only)
    cache_key: bytes | None = field(default=None, repr=False)  # its MAC key (None: the user's)
    rlimit: int = DEFAULT_RLIMIT  # deterministic budget of one query (Z3 resource units)
    prune: bool = True  # settle pairs without a solver where PR-2..PR-4 apply
    keep_queries: bool = False  # keep each obligation's SMT-LIB2 text (--smt2, --recheck)
    # prove early releases (CG-R1) after a proof: only codegen's layout needs them, so the CLI
    # asks for them with --emit-cuda / --check-cert and a plain proof does not pay for them
    releases: bool = False
    # ids of obligations an earlier proof of the same proc proved for all sizes its asserts
    # (and assumptions) admit: with `fixed_sizes` inside those, they hold there too and are not
    # solved again (specs/loading.md SYNC-5: an in-file sync_check proved at its sizes)
    proved_before: frozenset[str] = frozenset()


PROVED_BEFORE = "SYNC-5"  # discharged_by of an obligation an earlier proof proved (above)


def proved_before(earlier: ProcResult) -> frozenset[str]:
    """The obligations of `earlier` a proof of the same proc at sizes inside its own may take
    as proved (`Options.proved_before`, SYNC-5): every proved one, provided every premise a
    closed-form count relied on (SEM-6.4) was proved too; else none, since a count proved on
    an unproved premise holds only with it."""
    proved = ObligationStatus.proved
    if any(o.kind == "premise" and o.status is not proved for o in earlier.obligations):
        return frozenset()
    return frozenset(o.id for o in earlier.obligations if o.status is proved)


def _disk_cache(opts: Options) -> ProofCache | None:
    """The on-disk proof cache asked for, or None (also when its key is unusable: the
    proof then only costs time, SEC-7)."""
    if opts.cache_dir is None:
        return None
    try:
        return ProofCache(opts.cache_dir, opts.cache_key)
    except KeyUnavailable:
        return None


def static_finding(e: SporkError) -> Finding:
    kind = FindingKind.unsupported if isinstance(e, Unsupported) else FindingKind.static
    if e.code in ("ERR-A18", "ERR-A19", "ERR-A21", "ERR-A22", "ERR-A23", "ERR-A24", "ERR-V08"):
        kind = FindingKind.collective
    return Finding(kind, e.message, e.variable, e.loc, (), None, e.rule, e.code)




@contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """A proof builds some 10^5 short-lived z3 wrappers that reference counting frees; Python's
    cycle collector scanning them costs ~6 % of a Hopper proof and frees nothing. It is paused
    for one proc and restored after (results do not depend on it)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def verify_proc(proc: ir.Proc, opts: Options | None = None,
                progress: Callable[[int, int], None] | None = None) -> ProcResult:
    """`progress(done, known)` is called after each obligation (the count of known ones grows
    as premises are added); it must not raise except to stop the run."""
    with _cycle_collector_paused():
        return _verify_proc(proc, opts, progress)


def _verify_proc(proc: ir.Proc, opts: Options | None,
                 progress: Callable[[int, int], None] | None) -> ProcResult:
    opts = opts or Options()
    start = time.perf_counter()
    file = proc.loc.file
    assumed = dict(sorted((opts.fixed_sizes or {}).items()))

    def done(verdict: Verdict, obligations: list[ObligationResult], findings: list[Finding],
             cert: Certificate | None = None) -> ProcResult:
        findings.sort(key=lambda f: (f.loc.file, f.loc.line, f.loc.col, f.rule))
        return ProcResult(file, proc.name, verdict, time.perf_counter() - start,
                          tuple(obligations), tuple(findings), proc.loc, cert,
                          assumptions=tuple(assumed.items()))

    try:
        check_assumed_names(proc, assumed)
        log_analysis(proc)  # API-6: only with a debug folder set
        model = analyze(proc)
    except RejectedInput as e:
        return done(Verdict.rejected, [], [static_finding(e)])
    except Unsupported as e:
        return done(Verdict.unsupported, [], [static_finding(e)])

    try:
        builder = ObligationBuilder(model, fresh_context(), opts.fixed_sizes)
        obligations = builder.all(opts.prune)
        for ob in obligations:
            if ob.id in opts.proved_before and not ob.discharged_by:
                ob.discharged_by = PROVED_BEFORE
        empty = vacuity(builder, assumed, opts.timeout_s, opts.point)
        if empty is not None:
            return done(Verdict.vacuous, [], [empty])
        cache = _disk_cache(opts)
        with Discharger(opts.jobs, cache, opts.timeout_s) as discharger:
            run = _Run(proc, builder, discharger, opts)
            results, findings = run.all(obligations, progress)
            verdict = proc_verdict({r.status for r in results}, any(
                f.counterexample is not None and f.counterexample.replayed for f in findings))
            releases = early_releases(run, opts.prune) \
                if verdict is Verdict.proved and opts.releases else ()
    except RejectedInput as e:
        return done(Verdict.rejected, [], [static_finding(e)])
    except Unsupported as e:
        return done(Verdict.unsupported, [], [static_finding(e)])
    except Undecided as e:
        return done(Verdict.unknown, [], [Finding(FindingKind.unknown, str(e), None, proc.loc)])
    if verdict is Verdict.proved:
        verdict = _callees_proved(proc, opts, findings)
    cert = None
    if verdict is Verdict.proved:
        cert = Certificate(proc.name, ir_hash(proc),
                           tuple((r.id, r.query_hash or r.discharged_by) for r in results) +
                           release_evidence(releases), SOLVER_NAME, __version__,
                           releases=tuple((r.id, release_outcome(r)) for r in releases),
                           assumptions=tuple(assumed.items()))
    return dataclasses.replace(done(verdict, results, findings, cert), releases=releases,
                               assumptions=tuple(assumed.items()))


def _callees_proved(proc: ir.Proc, opts: Options, findings: list[Finding]) -> Verdict:
    """CALL-2: an inlined callee's accesses are checked against the caller's buffers, not
    against the windows it was passed; its own proof (for all sizes its asserts admit, which
    CALL-4 shows hold at the call) bounds them by its parameter shapes, i.e. the windows
    (CALL-3). Without that proof the caller is unknown, never proved."""
    verdict = Verdict.proved
    for callee in inlined_callees(proc):
        # for all sizes, and without codegen's early releases: only the callee's verdict counts
        sub = verify_proc(callee, dataclasses.replace(opts, fixed_sizes=None, releases=False))
        if sub.verdict is not Verdict.proved:
            verdict = Verdict.unknown
            findings.append(Finding(
                FindingKind.unknown, f"{proc.name} calls {callee.name}, which is "
                f"{sub.verdict.value}: the accesses of an inlined proc are bounded by the "
                "windows it is passed only through its own proof (CALL-2)", None, callee.loc,
                (), None, "CALL-2"))
    return verdict


def proc_verdict(statuses: set[ObligationStatus], replayed: bool) -> Verdict:
    """The proc's verdict from its obligations' statuses, failing closed: `proved` only when
    every obligation is proved, never by default (specs/verification.md)."""
    if ObligationStatus.refuted in statuses or replayed:
        return Verdict.refuted
    if statuses <= {ObligationStatus.proved}:
        return Verdict.proved
    if ObligationStatus.unsupported in statuses:
        return Verdict.unsupported
    return Verdict.unknown


Step = tuple[int, bool]  # (refinement level, anchored witnesses at a quantified level)
FIRST_STEP: Step = (0, False)


def quantified(step: Step) -> bool:
    """A step whose query binds its witnesses with quantifiers (Choice E5): the dear ones,
    which Choice E7 replays the first step's candidate before."""
    return step[0] in ANCHORED_FALLBACK and not step[1]


class _Run:
    """The obligations of one proc, in order: queries built on demand (or ahead of time for
    workers, `--jobs`), answers, refinement, replays and premises."""

    def __init__(self, proc: ir.Proc, builder: ObligationBuilder, discharger: Discharger,
                 opts: Options) -> None:
        self.proc, self.builder, self.discharger, self.opts = proc, builder, discharger, opts
        self.sizes = tuple(builder.size_names)
        self.built: dict[tuple[str, Step], tuple[Built, Query]] = {}
        self.replays: Replays = {}
        self.confirmed: set[tuple] = set()
        self.premises_seen: set[int] = set()  # premises already among the obligations
        # PR-8: each shared query's solve (obligations.py `_share`), and who reported its units
        self.shared: dict[str, tuple[Outcome | None, Step, int, set[int]]] = {}
        self.shared_by: set[str] = set()

    def query(self, ob: Obligation, step: Step) -> tuple[Built, Query]:
        key = (ob.id, step)
        if key not in self.built:
            level, fallback = step
            built = ob.build(level, fallback)
            last = level == ob.levels - 1
            rlimit = QUANTIFIED_RLIMIT if level in ANCHORED_FALLBACK and not fallback \
                else self.opts.rlimit
            self.built[key] = built, prepare(
                built.constraints, min(rlimit, self.opts.rlimit), exact=last,
                nonlinear=built.nonlinear, sizes=self.sizes if last else ())
        return self.built[key]

    def decide(self, ob: Obligation, step: Step) -> tuple[Outcome, Built]:
        built, q = self.query(ob, step)
        self.discharger.submit(q)  # with workers, even this one is solved there
        answer = self.discharger.answer(q)
        model = evaluate(built.names, q.own_constants(answer.constants)) \
            if answer.status is Status.candidate and q.exact else None
        return Outcome(answer.status, model, answer.reason, q.digest, answer.rlimit,
                       answer.stopped_by, q.published if self.opts.keep_queries else ""), built

    @staticmethod
    def next_step(ob: Obligation, step: Step, status: Status) -> Step | None:
        """Where refinement goes from `step` given its answer (None: this one decides).
        At each level with a quantified query (`ANCHORED_FALLBACK`) the anchored witnesses
        come first: they are a special case of the quantified ones, so their unsat is as
        good a proof, and they are cheap where the quantified query is not (Choice E5)."""
        level, anchored = step
        if status is Status.proved:
            return None
        if level in ANCHORED_FALLBACK and anchored:
            return level, False  # the anchored witnesses left a candidate: quantify them
        if level < ob.levels - 1:
            return level + 1, level + 1 in ANCHORED_FALLBACK  # longer chains
        return None

    def target(self, ob: Obligation) -> Obligation | None:
        """The obligation whose queries `ob` needs next: its shared one (PR-8) until that
        is answered, then itself unless the shared one proved it (None)."""
        if ob.shared is None:
            return ob
        done = self.shared.get(ob.shared.id)
        if done is None:
            return ob.shared
        return None if done[0] is not None and done[0].status is Status.proved else ob

    def prefetch(self, obligations: list[Obligation]) -> None:
        """With workers, every obligation's first query starts at once."""
        if self.discharger.jobs > 1:
            for ob in obligations:
                target = self.target(ob)
                if not ob.discharged_by and target is not None:
                    self.discharger.submit(self.query(target, FIRST_STEP)[1])

    def all(self, obligations: list[Obligation], progress: Callable[[int, int], None] | None
            ) -> tuple[list[ObligationResult], list[Finding]]:
        """Every obligation solved in order (a first step's candidate replayed at once, Choice
        E7); the last steps' candidates are replayed afterwards, smallest sizes first (a
        replay's cost grows with the sizes, and one replay at small sizes often confirms the
        candidates of several obligations: `seen`, `reuse_sizes`)."""
        done: dict[int, tuple[ObligationResult, Finding | None]] = {}
        deferred: list[tuple[int, Obligation, Outcome, Step, int, float]] = []
        premises_seen = self.premises_seen
        pending = collections.deque(obligations)  # popped at the left: 40,000 of them
        self.prefetch(list(pending))
        index = 0
        while pending:
            ob = pending.popleft()
            self.lookahead(list(itertools.islice(pending, 4 * self.discharger.jobs)))
            t0 = time.perf_counter()
            outcome, step, used, premises = self.solve(ob)
            if outcome is not None and outcome.status is Status.candidate:
                deferred.append((index, ob, outcome, step, used, time.perf_counter() - t0))
            else:
                done[index] = self.finish(ob, outcome, step, used, t0)
            index += 1
            for key in sorted(premises - premises_seen):  # facts the counters relied on
                premises_seen.add(key)
                pending.append(self.builder.premise(key))
                self.prefetch([pending[-1]])
            if progress is not None:
                progress(len(done), index + len(pending))
        deferred.sort(key=lambda d: (cost(d[2], self.sizes), d[0]))
        for k, ob, outcome, step, used, spent in deferred:
            done[k] = self.finish(ob, outcome, step, used, time.perf_counter() - spent)
            if progress is not None:
                progress(len(done), index)
        ordered = [done[k] for k in sorted(done)]
        return [r for r, _ in ordered], [f for _, f in ordered if f is not None]

    def solve(self, ob: Obligation) -> tuple[Outcome | None, Step, int, set[int]]:
        """The solver's last answer for `ob` after refinement (None: pruned), the step it
        came from, the resource units used and the premises its closed forms relied on."""
        step: Step = FIRST_STEP
        if ob.discharged_by:
            return None, step, 0, set()
        used = 0
        premises: set[int] = set()
        if ob.shared is not None:  # PR-8: the twins' merged query first, solved once
            first = ob.shared.id not in self.shared
            if first:
                self.shared[ob.shared.id] = self.solve(ob.shared)
            outcome, shared_step, shared_used, shared_premises = self.shared[ob.shared.id]
            used = shared_used if first else 0  # reported once, with the first twin
            premises = set(shared_premises)
            if outcome is not None and outcome.status is Status.proved:
                self.shared_by.add(ob.id)
                return outcome, shared_step, used, premises
        candidate: tuple[Outcome, Step] | None = None  # the last level's anchored candidate
        tried_first = ob.release != ""  # E7 is for the proc's own obligations
        while True:
            outcome, built = self.decide(ob, step)
            used += outcome.rlimit
            premises |= built.premises
            if seen(ob, self.replays) is not None:
                break  # a replay already exhibits this error: no refinement can remove it
            following = self.next_step(ob, step, outcome.status)
            if following is None:
                break
            if outcome.status is Status.candidate and quantified(following) and not tried_first:
                tried_first = True  # Choice E7, once, before the first quantified query
                first, q = self.query(ob, FIRST_STEP)
                early, extra = replay_first(self.proc, ob, first, q.rlimit, self.sizes,
                                            self.discharger, self.replays,
                                            self.opts.keep_queries)
                used += extra
                if early is not None:  # confirmed: no refinement can remove it
                    outcome = early
                    break
            if outcome.status is Status.candidate and following[0] == step[0]:
                candidate = outcome, step
            step = following
        if outcome.status is Status.unknown and candidate is not None and \
                candidate[1][0] == step[0]:
            outcome, step = candidate  # the quantified query gave up: replay the anchored one
        return outcome, step, used, premises

    def finish(self, ob: Obligation, outcome: Outcome | None, step: Step, used: int,
               t0: float) -> tuple[ObligationResult, Finding | None]:
        """The obligation's status: a candidate is replayed (or confirmed by a replay)."""
        if outcome is None:
            return ObligationResult(ob.id, ob.rule, ob.kind, ObligationStatus.proved,
                                    time.perf_counter() - t0, "", ob.description, 0,
                                    ob.discharged_by, note=ob.note), None
        if outcome.status is Status.candidate and seen(ob, self.replays) is None:
            outcome, extra = self.reuse_sizes(ob, step, outcome)
            used += extra
        status, finding = _judge(self.proc, ob, outcome, self.replays, self.builder,
                                 self.confirmed)
        by = "PR-8" if ob.id in self.shared_by else ""
        return ObligationResult(ob.id, ob.rule, ob.kind, status, time.perf_counter() - t0,
                                outcome.query_hash, ob.description, used, by,
                                outcome.stopped_by, outcome.text, note=ob.note), finding

    def lookahead(self, upcoming: list[Obligation]) -> None:
        """With workers, the next refinement step of a later obligation starts as soon as its
        current step's answer is in (wasted only when a replay settles that obligation
        first; answers never depend on it)."""
        if self.discharger.jobs == 1:
            return
        for upcoming_ob in upcoming:
            ob = self.target(upcoming_ob)  # type: ignore[assignment]
            step: Step | None = (0, False)
            while step is not None and ob is not None and not upcoming_ob.discharged_by:
                if (ob.id, step) not in self.built:
                    self.discharger.submit(self.query(ob, step)[1])
                    break
                answer = self.discharger.peek(self.built[(ob.id, step)][1])
                if answer is None:
                    break
                step = self.next_step(ob, step, answer.status)

    def reuse_sizes(self, ob: Obligation, step: Step, outcome: Outcome
                    ) -> tuple[Outcome, int]:
        """Prefer sizes the machine already ran at: one replay can confirm many obligations.
        Returns the outcome to replay and the resource units the extra queries used."""
        built, q = self.query(ob, step)
        used = 0
        for key in [k for k in self.replays if not (k and k[0] == "complete")]:
            fixed = [self.builder.size_names[name] == value for name, value in key]
            again = prepare(built.constraints + fixed, min(REUSE_RLIMIT, self.opts.rlimit),
                            nonlinear=q.nonlinear)
            answer = self.discharger.answer(again)
            used += answer.rlimit
            if answer.status is Status.candidate:
                model = evaluate(built.names, again.own_constants(answer.constants))
                return Outcome(Status.candidate, model, "", again.digest, answer.rlimit), used
        return outcome, used


def _judge(proc: ir.Proc, ob: Obligation, outcome: Outcome,
           replays: Replays, builder: ObligationBuilder,
           confirmed: set[tuple]) -> tuple[ObligationStatus, Finding | None]:
    if outcome.status is Status.proved:
        return ObligationStatus.proved, None
    if outcome.status is Status.unknown:
        return ObligationStatus.unknown, Finding(
            FindingKind.unknown, f"{ob.description}: solver returned unknown "
            f"({outcome.reason})", ob.variable, ob.loc, (), None, ob.rule)
    shown = seen(ob, replays)
    if shown is not None:
        sizes, found = shown
        key = (found.kind, found.variable, found.loc)
        if key in confirmed:
            return ObligationStatus.refuted, None
        confirmed.add(key)
        return ObligationStatus.refuted, machine_finding(found, sizes, True)
    assert outcome.model is not None
    sizes = {name: outcome.model[name] for name in builder.size_names}
    all_found = replay(proc, sizes, replays, (ob.kind, ob.variable, ob.loc))
    if not all_found:
        cex = Counterexample(sizes, {k: v for k, v in outcome.model.items()
                                     if k not in sizes}, [], [], False)
        return ObligationStatus.unknown, Finding(
            FindingKind.unknown, f"{ob.description}: candidate counterexample not reproduced "
            "by the abstract machine (spurious?)", ob.variable, ob.loc,
            tuple(Related(loc, role) for loc, role in ob.related), cex, ob.rule)
    matching = [f for f in all_found
                if f.kind == ob.kind and f.variable == ob.variable and f.loc == ob.loc]
    found = matching[0] if matching else all_found[0]
    status = ObligationStatus.refuted if matching else ObligationStatus.unknown
    key = (found.kind, found.variable, found.loc)
    if key in confirmed:
        return status, None
    confirmed.add(key)
    return status, machine_finding(found, sizes, True)


def concrete_verdict(proc: ir.Proc, sizes: dict[str, int]) -> tuple[Verdict, MachineFinding | None]:
    """The machine's verdict at one size (differential oracle): refuted, `no-hazard-at-sizes`
    (never `proved`: one size is not all sizes), or vacuous when the asserts exclude the sizes."""
    try:
        analyze(proc)
    except RejectedInput:
        return Verdict.rejected, None
    except Unsupported:
        return Verdict.unsupported, None
    holds, findings = run_machine(proc, sizes)
    if not holds:
        return Verdict.vacuous, None  # the asserts exclude these sizes (VAC-1)
    return (Verdict.refuted, findings[0]) if findings else (Verdict.no_hazard_at_sizes, None)


__all__ = ["Options", "verify_proc", "concrete_verdict", "proc_verdict", "z3"]
