"""Choice E7 (replay first, specs/verification.md): before an obligation's first quantified
query, its first step's candidate is replayed; a confirmed one stops its refinement, anything
else changes nothing. Each case is run with E7 and with it switched off, and the two reports compared."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from verifier.encode import verify
from verifier.encode.verify import quantified, verify_proc
from verifier.results import ObligationStatus, ProcResult, Verdict

from conftest import EXAMPLES, default_first, load_one

DECIDED = {ObligationStatus.proved, ObligationStatus.refuted, ObligationStatus.unknown,
           ObligationStatus.unsupported}


def _run(name: str, monkeypatch: pytest.MonkeyPatch, e7: bool
         ) -> tuple[ProcResult, dict[str, list[tuple[int, bool]]], list[bool]]:
    """The proc of examples/NAME.py verified, the refinement steps each obligation was asked
    at, and whether each E7 replay confirmed its obligation."""
    steps: dict[str, list[tuple[int, bool]]] = {}
    hits: list[bool] = []
    decide, replay_first = verify._Run.decide, verify.replay_first

    def logged_decide(self, ob, step):  # type: ignore[no-untyped-def]
        steps.setdefault(ob.id, []).append(step)
        return decide(self, ob, step)

    def logged_replay_first(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not e7:
            return None, 0
        outcome, used = replay_first(*args, **kwargs)
        hits.append(outcome is not None)
        return outcome, used

    with monkeypatch.context() as m:
        m.setattr(verify._Run, "decide", logged_decide)
        m.setattr(verify, "replay_first", logged_replay_first)
        result = verify_proc(load_one(EXAMPLES / f"{name}.py", name))
    return result, steps, hits


def _replayed(result: ProcResult) -> set[tuple[str, str | None, int]]:
    return {(f.kind.value, f.variable, f.loc.line) for f in result.findings
            if f.counterexample is not None and f.counterexample.replayed}


def _error(obligation_id: str) -> tuple[str, str, int]:
    """(kind, variable, line of the later statement) of a pair's id `KIND:VAR@EARLIER->LATER`
    (`ObligationBuilder`, verifier/encode/obligations.py)."""
    kind, rest = obligation_id.split(":", 1)
    variable, pair = rest.split("@", 1)
    return kind, variable, int(pair.split("->")[1].split(":")[0])


@pytest.fixture
def compare(monkeypatch: pytest.MonkeyPatch) -> Iterator:  # type: ignore[type-arg]
    yield lambda name: (_run(name, monkeypatch, True), _run(name, monkeypatch, False))


@pytest.mark.parametrize("name, kind, variable, line", default_first([
    ("smem_matmul_bug_nofence2", "WAR", "A_s", 26),
    ("endgame_ws_ring_bug_deadlock", "deadlock", "full", 26),
]))
def test_confirmed_candidate_stops_refinement(compare, name: str, kind: str, variable: str,
                                              line: int) -> None:
    (new, steps, hits), (old, old_steps, _) = compare(name)
    assert new.verdict is old.verdict is Verdict.refuted
    # the same replayed findings, the seeded bug's among them
    assert _replayed(new) == _replayed(old) and (kind, variable, line) in _replayed(new)
    # every obligation still decided, none skipped, the same ones
    assert [o.id for o in new.obligations] == [o.id for o in old.obligations]
    assert all(o.status in DECIDED for o in new.obligations)
    before = {o.id: o.status for o in old.obligations}
    for o in new.obligations:  # the same statuses, but where the `_seen` rule applies sooner:
        if o.status is not before[o.id]:  # its (kind, variable, statement) was replayed
            assert (before[o.id], o.status) == (ObligationStatus.proved, ObligationStatus.refuted)
            assert _error(o.id) in _replayed(new), o.id
    refuted = [o for o in new.obligations if o.status is ObligationStatus.refuted]
    # a replay of the first step's model confirmed: that obligation asked no quantified query,
    # where refinement without E7 asked one
    assert any(hits)
    assert any(not any(map(quantified, steps[o.id])) and any(map(quantified, old_steps[o.id]))
               for o in refuted)
    assert sum(o.rlimit for o in refuted) < sum(
        o.rlimit for o in old.obligations if o.status is ObligationStatus.refuted)


def test_unconfirmed_candidate_changes_nothing(compare) -> None:
    """endgame_ws_ring's candidates before its quantified queries are spurious: each E7 replay
    misses, and the proof (its certificate's query hashes, so the very queries that proved it)
    is the one refinement gives without E7."""
    (new, _, hits), (old, _, _) = compare("endgame_ws_ring")
    assert hits and not any(hits)
    assert new.verdict is old.verdict is Verdict.proved
    assert new.certificate is not None and old.certificate is not None
    assert new.certificate.obligations == old.certificate.obligations


@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_same_results_with_workers() -> None:
    """E7's queries and replays stay in the calling process, in the obligations' order: the
    report (statuses, query hashes, findings and their counterexamples) is the same for every
    --jobs (D4), resource units included (the text solved has its binder ids renumbered)."""
    from verifier.encode.verify import Options

    def summary(result: ProcResult) -> tuple:  # type: ignore[type-arg]
        return (result.verdict, [(o.id, o.status, o.query_hash, o.rlimit)
                                 for o in result.obligations],
                [(f.kind, f.variable, f.loc.line, f.counterexample)
                 for f in result.findings])

    proc = load_one(EXAMPLES / "endgame_ws_ring_bug_deadlock.py", "endgame_ws_ring_bug_deadlock")
    assert summary(verify_proc(proc, Options(jobs=1))) == \
        summary(verify_proc(proc, Options(jobs=2)))
