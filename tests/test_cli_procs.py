"""A file's procs proved side by side (specs/cli.md CLI-7, verifier/cli_procs.py): the report
is the sequential run's, verdict for verdict and certificate for certificate, and a proc
whose worker fails is proved in the calling process instead."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import verifier.cli_procs as cli_procs
from conftest import ROOT
from verifier.cli import main
from verifier.load.load_isolated import load_isolated

EXAMPLES = ROOT / "examples"
PARTS = ("saxpy.py", "smem_exchange.py", "smem_exchange_bug_nofence.py")


def _three_procs(tmp_path: Path) -> Path:
    """One file holding a proved, a proved and a refuted proc."""
    path = tmp_path / "three.py"
    path.write_text("\n\n".join((EXAMPLES / name).read_text() for name in PARTS))
    return path


def _report(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict]]:
    code = main(["--format", "json", "--no-progress", "--no-cache", str(path)])
    results = json.loads(capsys.readouterr().out)["results"]
    for r in results:
        r.pop("time_s")
        for o in r["obligations"]:
            o.pop("time_s", None)
    return code, results


@pytest.mark.rule("CLI-7")
def test_side_by_side_gives_the_sequential_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = _three_procs(tmp_path)
    monkeypatch.setattr(cli_procs, "workers", lambda: 2)
    side_by_side = _report(path, capsys)
    monkeypatch.setattr(cli_procs, "workers", lambda: 1)
    sequential = _report(path, capsys)
    assert side_by_side == sequential
    code, results = side_by_side
    assert code == 1 and [r["verdict"] for r in results] == ["proved", "proved", "refuted"]
    assert all(r["certificate"] for r in results[:2])


@pytest.mark.rule("CLI-7")
def test_a_failed_worker_leaves_its_proc_to_the_caller(tmp_path: Path) -> None:
    procs = load_isolated(str(_three_procs(tmp_path))).procs
    parent = os.getpid()

    def prove(p):  # type: ignore[no-untyped-def]
        if p.name == "smem_exchange" and os.getpid() != parent:
            raise RuntimeError("a worker's failure")
        return p.name

    out = cli_procs.prove_side_by_side(procs, prove, 2)
    assert sorted(out.values()) == ["saxpy", "smem_exchange_bug_nofence"]
    assert cli_procs.prove_side_by_side(procs, prove, 1) == {}  # one core: nothing ahead


@pytest.mark.rule("CLI-7")
def test_a_worker_that_dies_is_not_waited_for(tmp_path: Path) -> None:
    """A worker killed mid-proof (a solver crash, the OOM killer) ends the side-by-side run;
    the procs not back are the caller's, and nothing hangs."""
    procs = load_isolated(str(_three_procs(tmp_path))).procs
    parent = os.getpid()

    def prove(p):  # type: ignore[no-untyped-def]
        if p.name == "smem_exchange" and os.getpid() != parent:
            os._exit(9)
        return p.name

    out = cli_procs.prove_side_by_side(procs, prove, 2)
    assert "smem_exchange" not in out.values()
    assert set(out.values()) <= {"saxpy", "smem_exchange_bug_nofence"}
