"""Proof time per example (median of 3, cold solver cache) vs the concrete machine's time at
growing sizes. Prints one table; the ratio column is machine time / proof time.

    python benchmarks/proof_vs_machine.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from verifier.encode import verify_proc
from verifier.encode.discharge import clear_cache
from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.semantics import run_machine

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "saxpy.py": [{"n": 256}, {"n": 4096}, {"n": 65536}],
    "smem_exchange.py": [{"n": 256}, {"n": 4096}, {"n": 16384}],
    "smem_matmul.py": [{"M": 16, "N": 16, "K": 16}, {"M": 32, "N": 32, "K": 32},
                       {"M": 64, "N": 64, "K": 64}],
    "block_reduce.py": [{"nb": 1}, {"nb": 4}, {"nb": 16}],
}


def median_time(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        clear_cache()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'example':<18} {'verdict':<8} {'proof s (median)':>16}   "
          f"{'machine at sizes':<32} {'machine s':>10} {'machine/proof':>14}")
    for name, size_list in CASES.items():
        (proc,) = [p for p in load_procs(ROOT / "examples" / name) if isinstance(p, ir.Proc)]
        verdict = verify_proc(proc).verdict.value
        proof = median_time(lambda: verify_proc(proc), args.repeat)
        for k, sizes in enumerate(size_list):
            t0 = time.perf_counter()
            holds, findings = run_machine(proc, sizes)
            machine = time.perf_counter() - t0
            assert holds and not findings, (name, sizes, findings)
            label = ", ".join(f"{a}={v}" for a, v in sizes.items())
            head = (f"{name[:-3]:<18} {verdict:<8} {proof:>16.3f}" if k == 0
                    else f"{'':<18} {'':<8} {'':>16}")
            print(f"{head}   {label:<32} {machine:>10.3f} {machine / proof:>14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
