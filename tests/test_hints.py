"""Hints name the place of the missing synchronization (encode/hints.py): the Fence, the two
lines it goes between, and "checked" only when re-verifying the proc with that Fence inserted
proves the race's obligation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES

from verifier.cli import main
from verifier.diagnostics import SrcLoc
from verifier.encode import verify_proc
from verifier.encode import hints
from verifier.load.load import load_procs
from verifier.results import ObligationStatus

HEADER = "from verifier.lang import *\n\n\n@proc\n"


def findings(capsys: pytest.CaptureFixture[str], path: Path) -> list[dict]:
    main(["--format", "json", str(path)])
    return json.loads(capsys.readouterr().out)["results"][0]["findings"]


def test_missing_fence_hint_is_placed_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    (f,) = findings(capsys, EXAMPLES / "smem_exchange_bug_nofence.py")
    assert f["hint"].startswith("insert Fence(cuda_in_order, cuda_in_order) between lines 13 "
                                "and 14, at task level")
    assert f["hint"].endswith("(checked: with it inserted, this obligation is proved)")
    (missing,) = [r for r in f["related"] if r["role"] == "missing sync"]
    assert (missing["line"], missing["col"]) == (14, 13)


def test_inserted_fence_proves_the_obligation() -> None:
    path = EXAMPLES / "smem_matmul_bug_nofence1.py"
    (proc,) = load_procs(path)
    at = hints.place(proc, SrcLoc(str(path), 24, 29), SrcLoc(str(path), 29, 48))
    assert at is not None and (at.after_line, at.before_line) == (25, 26)
    fixed = verify_proc(hints.insert_fence(proc, at))
    status = {o.id: o.status for o in fixed.obligations}
    assert status["RAW:A_s@24:29->29:48"] is ObligationStatus.proved
    assert status["RAW:B_s@25:29->29:61"] is ObligationStatus.proved


def test_fence_inside_the_thread_loop_is_reported_as_not_enough(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "inloop.py"
    path.write_text(HEADER + """\
def inloop(n: size, x: f32[n, 256] @ CudaGmemLinear, y: f32[n, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n):
            tile: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                tile[t] = x[blk, t]
                y[blk, t] = tile[255 - t]
            Fence(cuda_in_order, cuda_in_order)
""")
    raw = next(f for f in findings(capsys, path) if f["kind"] == "RAW")
    assert "between lines 10 and 11, inside the cuda_threads loop of line 9" in raw["hint"]
    assert "does not remove it (checked)" in raw["hint"] and "split" in raw["hint"]


def test_threads_of_different_tasks_get_no_fence_hint(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    path = tmp_path / "xtask.py"
    path.write_text(HEADER + """\
def xtask(n: size, x: f32[n, 256] @ CudaGmemLinear, y: f32[256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n):
            for t in cuda_threads(0, 256):
                y[t] = x[blk, t]
""")
    (f,) = findings(capsys, path)
    assert f["kind"] == "WAW" and f["hint"].startswith("the two threads are in different tasks")
    assert all(r["role"] != "missing sync" for r in f["related"])


def test_expensive_procs_are_not_rechecked(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hints, "MAX_OBLIGATIONS", 5)
    (f,) = findings(capsys, EXAMPLES / "smem_exchange_bug_nofence.py")
    assert f["hint"].endswith("between lines 13 and 14, at task level (CTA scope: every thread "
                              "of the CTA runs it) (not checked)")


def test_barrier_programs_get_unchecked_advice_naming_the_syncs_between(
        capsys: pytest.CaptureFixture[str]) -> None:
    (f,) = findings(capsys, EXAMPLES / "ws_ring_bug_consumer_lag.py")
    assert f["hint"].startswith("the sync statements at lines 22, 24 run between the two "
                                "accesses but do not order them")
    assert f["hint"].endswith("(not checked)")
    roles = [(r["role"], r["line"]) for r in f["related"]]
    assert roles == [("earlier access", 21), ("later access", 26), ("sync between", 22),
                     ("missing sync", 23), ("sync between", 24)]
