"""SEM-6.8 (ring invariant, ERR-V09): the machine's completion order and the Z3 ring lemmas.

The static alternation rules (LANG-5.16) already imply the invariant, so an overrun program is
first rejected statically; with those rules switched off, the obligation alone must refute it
with a counterexample the machine replays (defence in depth: the proof does not rest on the
syntactic check)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.check import alternation
from verifier.encode import verify_proc
from verifier.load.load import load_procs
from verifier.results import FindingKind, ObligationStatus, Verdict
from verifier.semantics import run_machine
from verifier.semantics.rings import ring_info

ROOT = Path(__file__).resolve().parent.parent
INPUTS = ROOT / "tests" / "inputs"


def _proc(path: Path):  # type: ignore[no-untyped-def]
    (proc,) = load_procs(str(path))
    return proc


def test_ring_depths_follow_lang_5_19() -> None:
    info = ring_info(_proc(ROOT / "examples" / "ws_ring.py").body)
    assert sorted(info.depth.values()) == [3, 3]  # lag(full) + lag(empty) = 0 + R
    selfg = ring_info(_proc(INPUTS / "ring_overrun.py").body)
    assert list(selfg.depth.values()) == [1]  # 1 + lag


@pytest.mark.parametrize("name,sizes,var,line", [
    ("ring_overrun.py", {"T": 1, "K": 1}, "bar", 15),
    ("ring_overrun_cycle.py", {"T": 1, "K": 4}, "full", 23),
])
def test_machine_reports_overrun(name: str, sizes: dict[str, int], var: str, line: int) -> None:
    ok, found = run_machine(_proc(INPUTS / name), sizes, collect_all=True)
    assert ok
    overruns = [f for f in found if f.kind == "ring-overrun"]
    assert overruns and overruns[0].variable == var and overruns[0].loc.line == line
    assert "mbarrier ring overrun" in overruns[0].message


@pytest.mark.parametrize("name", ["ws_ring.py", "ws_ring_bug_lag.py", "ws_ring_bug_consumer_lag.py"])
def test_machine_no_overrun_when_guarded(name: str) -> None:
    for k in range(0, 8):
        _, found = run_machine(_proc(ROOT / "examples" / name), {"T": 1, "K": k},
                               collect_all=True)
        assert not [f for f in found if f.kind == "ring-overrun"], (name, k)


def test_ring_lemmas_are_obligations_and_prove() -> None:
    result = verify_proc(_proc(ROOT / "examples" / "ws_ring.py"))
    assert result.verdict is Verdict.proved
    rings = [o for o in result.obligations if o.rule == "SEM-6.8"]
    assert len(rings) == 2 and all(o.status is ObligationStatus.proved for o in rings)


@pytest.mark.parametrize("name,var,line,k", [
    ("ring_overrun.py", "bar", 15, 1),
    ("ring_overrun_cycle.py", "full", 23, 4),
])
def test_statically_rejected(name: str, var: str, line: int, k: int) -> None:
    result = verify_proc(_proc(INPUTS / name))
    assert result.verdict is Verdict.rejected
    assert result.findings[0].code == "ERR-A32"


@pytest.mark.parametrize("name,var,line,k", [
    ("ring_overrun.py", "bar", 15, 1),
    ("ring_overrun_cycle.py", "full", 23, 4),
])
def test_obligation_refutes_without_alternation_rule(monkeypatch: pytest.MonkeyPatch, name: str,
                                                     var: str, line: int, k: int) -> None:
    monkeypatch.setattr(alternation, "check", lambda *a, **kw: None)
    result = verify_proc(_proc(INPUTS / name))
    assert result.verdict is Verdict.refuted
    overrun = [f for f in result.findings if f.kind is FindingKind.ring_overrun]
    assert overrun, result.findings
    f = overrun[0]
    assert (f.variable, f.loc.line, f.code, f.rule) == (var, line, "ERR-V09", "SEM-6.8")
    assert f.counterexample is not None and f.counterexample.replayed
    assert f.counterexample.sizes["K"] >= k
