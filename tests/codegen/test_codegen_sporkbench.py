"""Every sporkbench proc spork-verify proves emits CUDA that nvcc compiles with the command in
its header (specs/codegen.md; issue 18): sporkbench's main, ping_pong and cursors branches,
each `examples/*/exocc_*.py` loaded unchanged, run through the CLI with `--emit-cuda`.

Sporkbench's own case list (the `FILE.json` each file writes) says which sizes it runs: where
every case has `K_split_max` 1 (the rmemC and data-parallel GEMMs, the ping-pong GEMM) the
file is verified with `--assume K_split=1`, the size sporkbench uses (specs/cli.md CLI-11).
$SPORKBENCH names the checkouts (several separated by `os.pathsep`); without it the test is
skipped. Heavy (minutes per Sm90a file): marked slow.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKOUTS = [Path(p) for p in os.environ.get("SPORKBENCH", "").split(os.pathsep) if p]
FILES = sorted(f for c in CHECKOUTS for f in (c / "examples").glob("*/exocc_*.py"))
_COMMAND = re.compile(r"^// nvcc target \S+: (?P<cmd>nvcc .*) -c FILE\.cu$", re.M)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHECKOUTS, reason="set SPORKBENCH to sporkbench checkouts "
                       "(os.pathsep-separated) to run the sporkbench lowering test"),
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found"),
]


def _verify(path: Path, out: Path, *extra: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "verifier.cli", str(path), "--format", "json",
                           "--no-progress", "--emit-cuda", str(out), *extra],
                          capture_output=True, text=True, timeout=3600, cwd=ROOT)
    assert done.returncode in (0, 1, 2, 3), done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(done.stdout)


def _sporkbench_runs_k_split_1(path: Path) -> bool:
    cases = path.with_name(path.name + ".json")
    if not cases.exists():
        return False
    listed = json.loads(cases.read_text())
    return bool(listed) and all(c.get("K_split_max") == 1 for c in listed)


@pytest.mark.rule("CG-X1", "COLL-5.12", "COLL-5.14")
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parents[2].name}/{p.name}")
def test_every_proved_sporkbench_proc_emits_cuda_that_compiles(path: Path,
                                                               tmp_path: Path) -> None:
    report = _verify(path, tmp_path)
    if _sporkbench_runs_k_split_1(path) and any(r["verdict"] == "refuted"
                                                for r in report["results"]):
        report = _verify(path, tmp_path, "--assume", "K_split=1")
    proved = [r["proc"] for r in report["results"] if r["verdict"] == "proved"]
    for proc in proved:
        cu = tmp_path / f"{proc}.cu"
        assert cu.exists(), f"{proc} is proved but no CUDA was emitted"
        cmd = _COMMAND.search(cu.read_text())
        assert cmd, f"{cu.name} names no nvcc command in its header"
        argv = cmd["cmd"].split() + ["-c", str(cu), "-o", str(cu.with_suffix(".o"))]
        built = subprocess.run(argv, capture_output=True, text=True, timeout=900)
        assert built.returncode == 0, f"{cu.name}: {built.stderr[-3000:]}"
        assert "warning" not in built.stderr, f"{cu.name}: {built.stderr[-3000:]}"
