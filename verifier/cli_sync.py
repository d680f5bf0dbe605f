"""The file's own `p.sync_check(**sizes)` calls, answered after the proofs (specs/loading.md
SYNC-3..7).

The loading child recorded each call (`verifier/load/sync_record.py`); here each gets its
answer, the cheapest sound one first: the proc's proof for all sizes covers it (SYNC-4); else
the proc is proved again at the call's sizes, taking the obligations the first proof proved as
proved (SYNC-5); else the concrete machine runs at those sizes to the end (SYNC-6). Nothing is
said about a call before its answer exists, and no answer is a guess: there is no time cap.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Sequence

from verifier.diagnostics import InternalError, SporkError
from verifier.encode.verify import Options, machine_finding, proved_before, verify_proc
from verifier.lang.ir.ir import Proc
from verifier.load.sync_record import SyncCall
from verifier.results import (
    Finding, ProcResult, SyncCheckResult, SyncCheckStatus, Verdict, assumed_words)


def _inside(assumptions: tuple[tuple[str, int], ...], sizes: dict[str, int]) -> bool:
    """The call's sizes have every value a proof assumed (CLI-11), so that proof covers them."""
    return all(sizes.get(name) == value for name, value in assumptions)


def _result(call: SyncCall, status: SyncCheckStatus, settled_by: str, message: str,
            start: float, **extra: object) -> SyncCheckResult:
    return SyncCheckResult(call.proc.name, call.sizes, call.loc, status, settled_by, message,
                           time_s=time.perf_counter() - start, **extra)  # type: ignore[arg-type]


def _machine(call: SyncCall, status: str, finding: Finding | None, why: str, settled_by: str,
             start: float) -> SyncCheckResult:
    """A SyncCheckResult of the machine's answer (`verifier.semantics.sync_check.answer`)."""
    if status == "hazard" and finding is not None:
        return _result(call, SyncCheckStatus.hazard, settled_by,
                       f"at {finding.loc}: {finding.message}", start,
                       finding=finding)
    if status == "not-run":
        return _result(call, SyncCheckStatus.not_run, settled_by,
                       f"the concrete machine cannot run this proc: {why}", start)
    return _result(call, SyncCheckStatus.no_hazard, settled_by,
                   "the concrete machine ran at these sizes to the end and found no hazard",
                   start)


def settle_call(call: SyncCall, result: ProcResult | None, opts: Options) -> SyncCheckResult:
    """The answer to one call; `result` is its proc's own result (None: the proc was not
    verified, e.g. never bound at module level)."""
    start = time.perf_counter()
    sizes = dict(call.sizes)
    # a call the child already ran (SYNC-3) is answered here as any other: its answer was
    # computed in the file's own process, so it decided what the file observed, never the
    # report or a verdict (SEC-1: the reply is the attacker's data)
    if result is not None and result.sizes:  # --sizes: the machine, no proof
        if result.sizes == call.sizes:
            found = next((f for f in result.findings if f.counterexample), None)
            status = SyncCheckStatus.hazard if found else SyncCheckStatus.no_hazard
            return _result(call, status, "machine", "the --sizes run at these sizes: " +
                           (found.message if found else "no hazard"), start, finding=found)
    elif result is not None:
        assumed = _inside(result.assumptions, sizes)
        if result.verdict is Verdict.proved and result.certificate is not None and assumed:
            scope = f" with {assumed_words(result.assumptions)}" if result.assumptions else ""
            return _result(call, SyncCheckStatus.covered, "proof",  # SYNC-4
                           f"the proof for all sizes{scope} covers these sizes", start,
                           certificate=result.certificate.digest())
        if result.obligations:  # SYNC-5: proved again at these sizes
            again = verify_proc(call.proc, dataclasses.replace(
                opts, fixed_sizes=sizes, releases=False, keep_queries=False,
                proved_before=proved_before(result) if assumed else frozenset()))
            reused = sum(o.discharged_by == "SYNC-5" for o in again.obligations)
            how = f"{reused} of {len(again.obligations)} obligations taken from the proof for " \
                "all sizes"
            if again.verdict is Verdict.proved and again.certificate is not None:
                return _result(call, SyncCheckStatus.covered, "proof-at-sizes",
                               f"proved at these sizes ({how})", start,
                               certificate=again.certificate.digest())
            found = next((f for f in again.findings if f.counterexample is not None and
                          f.counterexample.replayed), None)
            if again.verdict is Verdict.refuted and found is not None:
                return _result(call, SyncCheckStatus.hazard, "proof-at-sizes",
                               f"at {found.loc}: {found.message}",
                               start, finding=found)
    if result is not None and result.verdict is Verdict.rejected:  # SYNC-6: outside the rules
        why = result.findings[0] if result.findings else None
        return _result(call, SyncCheckStatus.not_run, "machine",
                       "the proc is rejected" + (f" ({why.code or why.rule} at {why.loc}: "
                                                 f"{why.message})" if why else "") +
                       "; the machine runs only procs the static rules accept", start)
    from verifier.semantics.sync_check import answer  # SYNC-6: the machine, to the end

    status, found_at, why = answer(call.proc, sizes)
    finding = machine_finding(found_at, sizes, True) if found_at is not None else None
    return _machine(call, status, finding, why, "machine", start)


def settle(calls: Sequence[SyncCall], procs: Sequence[Proc], results: list[ProcResult],
           opts: Options, only: Sequence[str] = ()) -> list[ProcResult]:
    """`results` (one per proc of `procs`, in order) with each call's answer under its proc's
    result (SYNC-7); a hazard makes an unknown or unsupported proc refuted. A call on a proc
    `only` (--proc) leaves out is not answered; one on a proc that was not verified (never
    bound at module level) is answered by the machine and listed under the first result."""
    index = {id(p): i for i, p in enumerate(procs)}
    out = list(results)
    for call in calls:
        if only and call.proc.name not in only:
            continue
        i = index.get(id(call.proc))
        if i is None and not out:
            continue
        try:
            answer = settle_call(call, out[i] if i is not None else None, opts)
        except SporkError as e:  # the machine refused the proc (a static error, say)
            answer = SyncCheckResult(call.proc.name, call.sizes, call.loc,
                                     SyncCheckStatus.not_run, "machine", e.message)
            if isinstance(e, InternalError):
                out[i or 0] = dataclasses.replace(out[i or 0], internal_error=True)
        target = out[i if i is not None else 0]
        out[i if i is not None else 0] = _with(target, answer, own=i is not None)
    return out


def _with(result: ProcResult, answer: SyncCheckResult, own: bool) -> ProcResult:
    """`result` listing `answer`; refuted by a hazard of its own proc that its proof did not
    decide (the machine's finding at these sizes is a replayed counterexample, as --sizes)."""
    findings: tuple[Finding, ...] = result.findings
    verdict = result.verdict
    if own and answer.status is SyncCheckStatus.hazard and answer.finding is not None and \
            verdict in (Verdict.unknown, Verdict.unsupported):
        verdict, findings = Verdict.refuted, findings + (answer.finding,)
    return dataclasses.replace(result, verdict=verdict, findings=findings,
                               sync_checks=result.sync_checks + (answer,))
