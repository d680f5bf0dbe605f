"""DIAL-11 (specs/dialects.md): one schedule, the sequential trace or lockstep, must satisfy
every ring Await of a proc; the concrete machine and the encoder share the schedules
(semantics/schedules.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import load_one
from verifier.semantics.run import run_machine
from verifier.semantics.schedules import TIED, AwaitLog, Schedule, layouts, tied

PROGRAMS = Path(__file__).parent / "programs_endgame"


def test_the_table_ties_thread_loops_in_lockstep_only() -> None:
    assert tied(Schedule.LOCKSTEP, "threads") and not tied(Schedule.SEQUENTIAL, "threads")
    assert not any(tied(s, kind) for s in TIED for kind in ("seq", "task"))


def test_machine_refutes_the_cross_hang_each_schedule_half_satisfies() -> None:
    """Each Await is satisfied by one of the two schedules, never both by the same one: the
    warps hang, and the machine reports the first Await the trace leaves unsatisfied."""
    proc = load_one(PROGRAMS / "ring_cross_hang.py", "cross_hang")
    for batched in (True, False):
        holds, found = run_machine(proc, {}, batched=batched)
        assert holds and len(found) == 1
        f = found[0]
        assert (f.kind, f.variable, f.loc.line) == ("deadlock", "b", 26), f
        assert "nor does the lockstep schedule" in f.message and "a[0] at line 23" in f.message
    holds, found = run_machine(proc, {}, collect_all=True)
    assert [(f.kind, f.variable, f.loc.line) for f in found] == [("deadlock", "b", 26)]


def test_machine_passes_the_all_gather_the_trace_alone_refutes() -> None:
    proc = load_one(PROGRAMS / "multicast_all_gather.py", "all_gather")
    assert run_machine(proc, {}) == (True, [])
    assert run_machine(proc, {}, collect_all=True) == (True, [])


def test_lockstep_positions_drop_thread_iterators_only() -> None:
    proc = load_one(PROGRAMS / "multicast_all_gather.py", "all_gather")
    lock = layouts(proc.body, Schedule.LOCKSTEP)
    seq = layouts(proc.body, Schedule.SEQUENTIAL)
    assert set(lock) == set(seq) and len(lock) == 2  # the Arrive and the Await
    for key in lock:
        assert len(seq[key]) == len(lock[key]) + 1  # the CTA iterator c, in seq only
    log = AwaitLog(lock)
    assert log.first_unsatisfied() is None
