"""Deterministic budgets, the proof cache and parallel discharge (specs/verification.md D1-D4,
specs/cli.md CLI-7): answers are a function of the query text and the budget, whoever
computes them."""

from __future__ import annotations

import importlib.util
import json
import multiprocessing
import sys

import pytest
import z3

from verifier.encode import Options, verify_proc
from verifier.encode import discharge
from verifier.encode.discharge import Discharger, clear_cache
from verifier.encode.proof_cache import ProofCache
from verifier.encode.smtlib import canonical_text
from verifier.encode.solver import Answer, Status, prepare, solve
from verifier.results import ObligationStatus, Verdict

from conftest import EXAMPLES, ROOT, load_one


def _cubes(ctx: z3.Context) -> list[z3.BoolRef]:
    """x³ + y³ = z³ over positive integers: hard for Z3's nonlinear arithmetic."""
    x, y, z = z3.Ints("x y z", ctx)
    return [x > 0, y > 0, z > 0, x * x * x + y * y * y == z * z * z]


def _simple(ctx: z3.Context) -> list[z3.BoolRef]:
    n, i = z3.Ints("n i", ctx)
    return [n >= 1, i >= 0, i < n, i >= n - 1]


def test_text_does_not_depend_on_what_was_built_before() -> None:
    busy = z3.Context()
    for k in range(50):  # shared sub-terms and ids that a plain printer would leak (D2)
        z3.simplify(z3.Int(f"noise{k}", busy) * 3 + 1)
    assert canonical_text(_simple(busy)) == canonical_text(_simple(z3.Context()))


def test_answer_is_a_function_of_the_query() -> None:
    q = prepare(_simple(z3.Context()), rlimit=1_000_000, sizes=("n",))
    first, second = solve(q), solve(q)
    assert first == second and first.status is Status.candidate
    assert first.rlimit > 0 and first.constants["n"] >= 1


def test_exhausted_budget_is_a_deterministic_unknown() -> None:
    q = prepare(_cubes(z3.Context()), rlimit=20_000, nonlinear=True)
    first, second = solve(q), solve(q)
    assert first.status is Status.unknown and first.stopped_by == "rlimit"
    assert "resource limit" in first.reason and first.deterministic
    assert first == second  # same units used, same reason


def test_safety_net_stop_is_reported_and_never_stored(tmp_path) -> None:
    q = prepare(_cubes(z3.Context()), rlimit=10**9)
    cache = ProofCache(tmp_path)
    with Discharger(1, cache, wall_s=0.001) as d:
        answer = d.answer(q)
    assert answer.status is Status.unknown and answer.stopped_by == "wall-clock"
    assert not answer.deterministic and "load" in answer.reason
    assert cache.get(q.key) is None and not list(tmp_path.rglob("*.json"))


def test_cache_round_trip_and_damaged_entries(tmp_path) -> None:
    cache = ProofCache(tmp_path)
    answer = Answer(Status.candidate, "", {"n": 5, "i": 4}, 1234)
    cache.put("ab" * 32, answer)
    assert cache.get("ab" * 32) == answer
    path = next(tmp_path.rglob("*.json"))
    entry = json.loads(path.read_text())
    entry["payload"]["constants"]["n"] = 6  # tampered: the checksum no longer matches
    path.write_text(json.dumps(entry))
    assert cache.get("ab" * 32) is None
    path.write_text("{not json")
    assert cache.get("ab" * 32) is None
    other = tmp_path / "cd" / f"{'cd' * 32}.json"  # an entry filed under another key
    other.parent.mkdir()
    cache.put("ab" * 32, answer)
    other.write_text(path.read_text())
    assert cache.get("cd" * 32) is None


def _writer(root: str, key: str, k: int) -> None:
    cache = ProofCache(root)
    for _ in range(50):
        cache.put(key, Answer(Status.proved, "", {}, 100))
        assert cache.get(key) in (None, Answer(Status.proved, "", {}, 100))


def test_concurrent_writers_leave_whole_entries(tmp_path) -> None:
    key = "ef" * 32
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), key, k)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert ProofCache(tmp_path).get(key) == Answer(Status.proved, "", {}, 100)
    assert not list(tmp_path.rglob(".tmp-*"))  # no half-written file left behind


def _summary(result) -> tuple:
    return (result.verdict, [(o.id, o.status, o.rlimit, o.discharged_by)
                             for o in result.obligations],
            [(f.kind, f.variable, f.loc.line) for f in result.findings])


def test_jobs_and_cache_give_the_same_results(tmp_path, monkeypatch) -> None:
    proc = load_one(EXAMPLES / "smem_exchange_bug_nofence.py", "smem_exchange_bug_nofence")
    clear_cache()
    alone = verify_proc(proc, Options(jobs=1))
    clear_cache()
    parallel = verify_proc(proc, Options(jobs=2, cache_dir=tmp_path))
    assert _summary(alone) == _summary(parallel)
    assert alone.verdict is Verdict.refuted
    clear_cache()

    def no_solving(*args: object) -> Answer:
        raise AssertionError("answered from the proof cache, never solved")

    monkeypatch.setattr(discharge, "solve", no_solving)
    again = verify_proc(proc, Options(cache_dir=tmp_path))
    assert _summary(again) == _summary(alone)
    clear_cache()


def _without_timings(report: object) -> object:
    """A JSON report less its wall-clock fields (`time_s`), which depend on the machine."""
    if isinstance(report, dict):
        return {k: _without_timings(v) for k, v in report.items() if k != "time_s"}
    if isinstance(report, list):
        return [_without_timings(v) for v in report]
    return report


@pytest.mark.rule("D1", "D4", "CLI-7")
def test_one_and_two_jobs_give_the_same_report(tmp_path) -> None:
    """Everything but timings, resource units included, is the same for --jobs 1 and 2 (D4):
    with workers the queries are built in another order, so the process-wide binder ids in
    their names differ; the text solved has them renumbered (`solver.prepare`), since z3's
    work depends on the names it parses. The file refutes with replayed counterexamples."""
    from verifier.cli import main
    reports = []
    for jobs in ("1", "2"):
        clear_cache()
        out = tmp_path / f"jobs{jobs}.json"
        main([str(EXAMPLES / "endgame_ws_ring_bug_deadlock.py"), "--jobs", jobs, "--no-cache",
              "--format", "json", "--no-progress", "--output", str(out)])
        reports.append(_without_timings(json.loads(out.read_text())))
    one, two = reports
    assert one.keys() == two.keys()
    for left, right in zip(one["results"], two["results"], strict=True):
        assert left["verdict"] == "refuted" and left["findings"]
        for field in left.keys() | right.keys():  # field by field: a failure names it
            assert left.get(field) == right.get(field), field
    assert one == two
    clear_cache()


@pytest.mark.parametrize("file, name", [
    ("smem_exchange", "smem_exchange"),
    ("smem_exchange_bug_late_fence", "smem_exchange_bug_late_fence"),
    ("cp_async_double_buffer", "double_buffer"),
    ("block_reduce_bug_warpfence", "block_reduce_bug_warpfence")])
def test_pruning_keeps_every_verdict(file: str, name: str) -> None:
    """PR-2..PR-4 settle pairs without a solver; with them off, every pair is solved, and the
    verdict and the refuted obligations are the same."""
    proc = load_one(EXAMPLES / f"{file}.py", name)
    pruned = verify_proc(proc, Options(prune=True))
    full = verify_proc(proc, Options(prune=False))
    assert pruned.verdict is full.verdict
    refuted = {o.id for o in pruned.obligations if o.status is ObligationStatus.refuted}
    assert refuted == {o.id for o in full.obligations if o.status is ObligationStatus.refuted}
    assert not any(o.discharged_by for o in full.obligations)
    assert {o.id for o in pruned.obligations} <= {o.id for o in full.obligations}


def test_cli_budget_options(capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch) -> None:
    """CLI-7: --jobs, --rlimit, --no-cache; the cache folder comes from the environment."""
    from verifier.cli import main

    monkeypatch.setenv("SPORK_VERIFY_CACHE_DIR", str(tmp_path))
    saxpy = str(EXAMPLES / "saxpy.py")
    assert main([saxpy, "--jobs", "2", "--format", "json", "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    units = [o["rlimit"] for o in doc["results"][0]["obligations"]]
    assert list(tmp_path.rglob("*.json"))  # answers were stored
    assert main([saxpy, "--no-cache", "--format", "json", "--no-progress"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [o["rlimit"] for o in again["results"][0]["obligations"]] == units
    for bad in (["--jobs", "0"], ["--rlimit", "-5"], ["--rlimit", "many"]):
        assert main([saxpy, *bad]) == 2
        assert "positive whole number" in capsys.readouterr().err


def _ping_pong(tmp_path, phases: int, drop_fence: int | None = None):
    """benchmarks/mutants.py's scale kernel (a 256-element SMEM tile passed between buffers a
    and b, a CTA fence between phases), small."""
    spec = importlib.util.spec_from_file_location("mutants", ROOT / "benchmarks" / "mutants.py")
    assert spec is not None and spec.loader is not None
    mutants = sys.modules.setdefault("mutants", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(mutants)
    path = tmp_path / f"pp{phases}_{drop_fence}.py"
    path.write_text(mutants.ping_pong(phases, drop_fence))
    return load_one(path, "ping_pong")


def test_kills_only_count_mutates_that_can_lie_between(tmp_path) -> None:
    """encode/kills.py: a mutate of the element is assumed absent between a and b only where
    one of its instances can lie there (`may_lie_between`, SEM-1.8); the others would add
    unsat disjuncts, O(phases) per pair. Proofs and refutations are unchanged."""
    from verifier.check import analyze
    from verifier.encode.kills import may_lie_between

    proc = _ping_pong(tmp_path, 4)
    sites = [s for s in analyze(proc).accesses if s.buf.name == "b" and not s.is_free]
    writes = [s for s in sites if s.kind.value != "read"]
    reads = [s for s in sites if s.kind.value == "read"]
    first, second = sorted(writes, key=lambda s: s.loc.line)
    read_1 = min(reads, key=lambda s: s.loc.line)  # phase 1 reads phase 0's b
    assert first.loc.line < read_1.loc.line < second.loc.line
    assert not may_lie_between(first, second, read_1)  # phase 2's write comes after the read
    assert may_lie_between(first, second, max(reads, key=lambda s: s.loc.line))
    clear_cache()
    assert verify_proc(proc).verdict is Verdict.proved
    cut = verify_proc(_ping_pong(tmp_path, 4, drop_fence=1))
    assert cut.verdict is Verdict.refuted
    # phase 2 reads a and overwrites b with no fence after phase 1's write of a, read of b
    assert {(f.kind.value, f.variable, f.loc.line) for f in cut.findings} == \
        {("RAW", "a", 20), ("WAR", "b", 20)}
    clear_cache()
