"""Verdict and proof time of every proc sporkbench's Sm80 / gemv / f16 / legacy / Sm90a example
files build, run unchanged through spork-verify (issue 8).

Usage: python3 benchmarks/sporkbench_sm80.py SPORKBENCH_CHECKOUT [--upstream-python PY]
       [--only SUBSTRING ...]

Each file runs as `spork-verify --format json FILE` would (isolated loading, the CLI's
defaults); the proof time is per proc, for all sizes. With --upstream-python (a Python with
upstream's exo installed), upstream's own `sync_check` at L=1, M=N=K=1024 (one size) is timed
per proc next to it (benchmarks/upstream_sync_check_time.py, after the file's own small
sync_check calls have warmed upstream's JIT); an error upstream's checker raises is shown
instead of a time. Prints a table and the machine load (os.getloadavg()); the machine is shared
and noisy, so the times are indicative.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import load_average  # noqa: E402
from verifier.cli import main as cli_main  # noqa: E402

UPSTREAM_FILE_S = 1500  # upstream's checker at 1024^3 takes minutes per proc
FOLDERS = ("Sm80_gemm", "gemv", "f16_experiment", "legacy_gemm", "Sm90a_gemm")


def example_files(checkout: Path) -> list[Path]:
    out = []
    for folder in FOLDERS:
        out += sorted((checkout / "examples" / folder).glob("exocc_*.py"))
    return out


def run_file(path: Path) -> tuple[list[dict], float]:
    buf = io.StringIO()
    start = time.perf_counter()
    with redirect_stdout(buf):
        cli_main(["--format", "json", str(path)])
    wall = time.perf_counter() - start
    return json.loads(buf.getvalue()).get("results", []), wall


def upstream_sizes(path: Path) -> dict[str, int]:
    """L=1, M=N=K=1024 in each file's own size arguments; a split-K GEMM splits K in two as
    its own sync_check does (K = K_splits * K_cta)."""
    splits = 2 if "splitK" in path.name else 1
    return {"L": 1, "M": 1024, "N": 1024, "K": 1024, "K_splits": splits,
            "K_cta": 1024 // splits}


def upstream_sync_check_times(python: str, path: Path, jit: Path
                              ) -> dict[str, float | str] | str:
    """Upstream's own sync_check at 1024^3 per proc: benchmarks/upstream_sync_check_time.py run
    as a file by upstream's Python on a scratch copy of the example's folder, with the
    checker's JIT in `jit` (one scratch folder for the run, so it is built once)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.parent.name
        shutil.copytree(path.parent, copy, symlinks=True)
        env = {**os.environ, "CAMSPORK_JIT_DIR": str(jit)}
        env.pop("PYTHONPATH", None)
        try:
            r = subprocess.run([python, str(ROOT / "benchmarks" / "upstream_sync_check_time.py"),
                                str(copy / path.name), json.dumps(upstream_sizes(path))],
                               capture_output=True, text=True, cwd=copy, env=env,
                               timeout=UPSTREAM_FILE_S)
        except subprocess.TimeoutExpired:
            return f"not measured (over {UPSTREAM_FILE_S} s for the file)"
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        last = (r.stderr.strip().splitlines() or ["failed"])[-1]
        return f"upstream raised ({last[:100]})"
    return json.loads(lines[-1])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--upstream-python", help="a Python with upstream's exo installed")
    ap.add_argument("--only", nargs="*", default=(), help="run only the files whose path "
                    "contains one of these strings (upstream's checker takes minutes a proc)")
    args = ap.parse_args(argv)
    print(f"load average before: {load_average()}")
    print(f"{'file':58} {'proc':56} {'verdict':12} {'proof s':>8} {'file s':>7}  upstream "
          "sync_check 1024^3")
    jit = Path(tempfile.mkdtemp(prefix="camspork_jit_"))
    for path in example_files(args.checkout):
        if args.only and not any(o in str(path) for o in args.only):
            continue
        with tempfile.TemporaryDirectory() as tmp:  # the files write a .json next to them
            copy = Path(tmp) / path.parent.name
            shutil.copytree(path.parent, copy, symlinks=True)
            results, wall = run_file(copy / path.name)
        compared = any(r["verdict"] in ("proved", "refuted") for r in results)
        upstream = ("not measured (no --upstream-python)" if not args.upstream_python else
                    "not timed (no spork-verify proof to compare)" if not compared else
                    upstream_sync_check_times(args.upstream_python, path, jit))
        rel = f"{path.parent.name}/{path.name}"
        for r in results or [{"proc": "-", "verdict": "no result", "time_s": 0.0}]:
            up = upstream.get(r["proc"], "not measured") if isinstance(upstream, dict) \
                else upstream
            up_text = f"{up:.2f} s" if isinstance(up, float) else up
            reason = ""
            if r["verdict"] in ("rejected", "unsupported", "refuted") and r.get("findings"):
                f = r["findings"][0]
                reason = f"  [{f.get('kind')}/{f.get('code')}: {f.get('message', '')[:60]}]"
            print(f"{rel:58} {r['proc']:56} {r['verdict']:12} {r.get('time_s', 0):8.2f} "
                  f"{wall:7.1f}  {up_text}{reason}", flush=True)
    shutil.rmtree(jit, ignore_errors=True)
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
