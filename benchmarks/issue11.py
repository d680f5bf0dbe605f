"""Issue 11 ("Seconds, every time"): gemm_sm80's cold proof time (median of N, in-process
cache cleared before each run, one process) on the machine as it is, then again with three
CPU-bound processes running beside it, with the verdicts and the machine load of each phase.

    python benchmarks/issue11.py [--repeat 3] [--hogs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from verifier.encode import verify_proc
from verifier.encode.discharge import clear_cache
from verifier.lang import ir
from verifier.lang.load import load_procs

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "examples" / "gemm_sm80.py"


def cold_runs(proc: ir.Proc, repeat: int) -> tuple[list[float], set[str], int]:
    """Wall times, the verdicts seen and the obligation count of `repeat` cold proofs."""
    times, verdicts, count = [], set(), 0
    for _ in range(repeat):
        clear_cache()
        t0 = time.perf_counter()
        result = verify_proc(proc)
        times.append(time.perf_counter() - t0)
        verdicts.add(result.verdict.value)
        count = len(result.obligations)
    return times, verdicts, count


def row(label: str, times: list[float], verdicts: set[str], count: int) -> None:
    load = os.getloadavg()[0]
    print(f"{label:<28} {statistics.median(times):>9.2f} "
          f"{', '.join(f'{t:.2f}' for t in times):>24} {'/'.join(sorted(verdicts)):>10} "
          f"{count:>5} {load:>6.2f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--hogs", type=int, default=3)
    args = ap.parse_args()
    (proc,) = [p for p in load_procs(GEMM) if isinstance(p, ir.Proc)]
    print(f"gemm_sm80 cold proof, {os.cpu_count()} CPUs, load before: "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'phase':<28} {'median s':>9} {'runs s':>24} {'verdict':>10} {'obls':>5} "
          f"{'load1':>6}")
    row("as is", *cold_runs(proc, args.repeat))
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.hogs)]
    try:
        time.sleep(1.0)
        row(f"with {args.hogs} CPU hogs", *cold_runs(proc, args.repeat))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
