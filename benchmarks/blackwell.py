"""Seconds per Blackwell GEMM proc as a user runs it (issue 21: each proc proved for all sizes in
<= 3 s): `spork-verify --no-cache FILE.py` from the shell, one fresh process per run (load,
static checks, proof, report), CPU seconds of the process and its children (user + sys, as
/usr/bin/time reports them), the median of --repeat runs, with the load average around each
file. The proof cache is off, so every run proves from scratch.

    python3 benchmarks/blackwell.py --repeat 3 > benchmarks/results/blackwell.txt
"""

from __future__ import annotations

import argparse
import datetime
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness import ROOT, load_average

PROGRAMS = ROOT / "tests" / "programs_blackwell"
PROVED = ["bw_gemm", "bw_gemm_cta2", "bw_gemm_multicast", "bw_gemm_persistent", "bw_gemm_f16",
          "bw_gemm_f8", "bw_gemm_tmem_a",
          "bw_gemm_tma_store"]
TARGET_S = 3.0


def run_once(path: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + sys of the child and its children) and exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    argv = [str(Path(sys.executable).parent / "spork-verify"), "--no-cache", "--no-progress",
            str(path)]
    code = subprocess.run(argv, capture_output=True, check=False, cwd=ROOT).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True, cwd=ROOT, check=False)
    return out.stdout.strip() or "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("names", nargs="*", default=PROVED)
    args = ap.parse_args()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# {now}, commit {commit()}, median of {args.repeat} fresh runs of")
    print("#   spork-verify --no-cache FILE.py   (python3 benchmarks/blackwell.py "
          f"--repeat {args.repeat})")
    print(f"# {'file':<26} {'exit':>4} {'wall s':>7} {'cpu s':>6}  {'<= 3 s cpu':<10} "
          "load (1/5/15 min) before .. after")
    worst = 0.0
    for name in args.names:
        load_before = load_average()
        runs = [run_once(PROGRAMS / f"{name}.py") for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        codes = sorted({r[2] for r in runs})
        worst = max(worst, cpu)
        met = "met" if cpu <= TARGET_S and codes == [0] else "NOT met"
        print(f"  {name + '.py':<26} {','.join(map(str, codes)):>4} {wall:7.2f} {cpu:6.2f}  "
              f"{met:<10} {load_before} .. {load_average()}", flush=True)
    print(f"# largest median CPU: {worst:.2f} s (target {TARGET_S} s per proc)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
