"""Cost of isolated loading (specs/loading.md): per example, the median time to load it in
this process and in a child process, the child's start-up (interpreter, site, verifier.lang)
and the time running the file in the child. Also a bare `python -c pass` for reference.

    python benchmarks/load_overhead.py [--repeat 7] [EXAMPLE.py ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from verifier.load.load import load_procs
from verifier.load.load_isolated import load_isolated

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["saxpy.py", "smem_exchange.py", "smem_matmul.py", "gemm_sm80.py", "gemm_sm80_ws.py"]


def median(values: list[float]) -> float:
    return statistics.median(values) * 1000.0


def cpu_s() -> float:
    """CPU seconds of this process and every child it has waited for (and theirs)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def bare_interpreter_ms(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - t0)
    return median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = [Path(f) for f in args.files] or [ROOT / "examples" / f for f in DEFAULT]
    load = os.getloadavg()
    print(f"machine load (1/5/15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{os.cpu_count()} CPUs; medians of {args.repeat} runs, milliseconds")
    print(f"bare `python -c pass`: {bare_interpreter_ms(args.repeat):.1f} ms")
    print(f"{'file':<22} {'in-process':>10} {'isolated':>9} {'ratio':>6} {'child start':>11} "
          f"{'child run':>9} {'overhead':>9} {'isolated CPU':>12}")
    for path in files:
        here, total, startup, run, cpu = [], [], [], [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            load_procs(path)
            here.append(time.perf_counter() - t0)
            c0 = cpu_s()
            loaded = load_isolated(path)
            cpu.append(cpu_s() - c0)
            assert loaded.error is None, loaded.error.render()
            total.append(loaded.timings["total_s"])
            startup.append(loaded.timings["startup_s"])
            run.append(loaded.timings["run_s"])
        print(f"{path.name[:22]:<22} {median(here):>10.1f} {median(total):>9.1f} "
              f"{median(total) / median(here):>6.1f} {median(startup):>11.1f} "
              f"{median(run):>9.1f} {median(total) - median(here):>9.1f} "
              f"{median(cpu):>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
