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


RACE_AFTER = '''
from verifier.lang import *

@proc
def {name}(y: f32[32] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=2, blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[2, 1 @ ring_buffer_by(1)] @ CudaMbarrier
            tile: f32[32] @ CudaSmemLinear
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                {first}
                {second}
            for t in cuda_threads(0, 32):
                tile[t] = y[t]
            for t in cuda_threads(0, 32):
                y[t] = tile[31 - t]
            Fence(cuda_in_order, cuda_in_order)
'''
ARRIVE = "Arrive(cuda_in_order, 1) >> bar[c, 0] >> bar[:, 0]"
AWAIT = "Await(bar[c, 0], cuda_in_order, 0)"


def test_a_run_stopped_by_a_later_error_completes_the_log_first(tmp_path: Path) -> None:
    """The first-error run meets the race after a deferred Await: it decides the Await on a
    log completed by a counting run, so the race is reported when lockstep satisfies every
    Await, the Await (earlier in the trace) when no schedule does."""
    for name, first, second, want in (("gather_then_race", ARRIVE, AWAIT, ("RAW", "tile", 16)),
                                      ("hang_then_race", AWAIT, ARRIVE, ("deadlock", "bar", 11))):
        path = tmp_path / f"{name}.py"
        path.write_text(RACE_AFTER.format(name=name, first=first, second=second))
        proc = load_one(path, name)
        for kwargs in ({}, {"batched": False}, {"collect_all": True}):
            holds, found = run_machine(proc, {}, **kwargs)
            assert holds and found, (name, kwargs)
            assert (found[0].kind, found[0].variable, found[0].loc.line) == want, (name, found)
