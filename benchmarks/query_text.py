"""What the structural query printer costs: `python benchmarks/query_text.py [EXAMPLE...]`.

Query texts are printed with `Solver.sexpr()` (structural aliasing, `smtlib.canonical_text`) so
that a query hash is the same in every process (`--check-cert` re-runs the proof). Z3's
benchmark printer (`to_smt2`, after a copy into a fresh context) is cheaper but let-binds by
reference counts. For each example this proves every proc without the proof cache, times both
printers on every query the proof builds, and prints the medians of `--repeat` runs (default 3)
with the proof time and the machine's load: the machine is shared and noisy, read ratios only.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import z3

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import verifier.encode.solver as solver  # noqa: E402
from verifier.encode import Options, verify_proc  # noqa: E402
from verifier.lang.load import load_procs  # noqa: E402

DEFAULT = ["saxpy", "smem_matmul", "ws_ring", "gemm_sm80_ws", "gemm_sm80"]


def refcount_printer(constraints: list[z3.BoolRef]) -> str:
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    s.add(*[c.translate(ctx) for c in constraints])
    return s.to_smt2()


def one_run(path: Path) -> tuple[float, float, float, int]:
    """(proof s, structural printer s, reference-count printer s, queries) of one cold proof."""
    spent = {"sexpr": 0.0, "smt2": 0.0, "n": 0}
    structural = solver.canonical_text

    def timed(constraints: list[z3.BoolRef]) -> str:
        t0 = time.perf_counter()
        text = structural(constraints)
        spent["sexpr"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        refcount_printer(constraints)
        spent["smt2"] += time.perf_counter() - t0
        spent["n"] += 1
        return text

    solver.canonical_text = timed
    try:
        t0 = time.perf_counter()
        for proc in load_procs(path):
            verify_proc(proc, Options(cache_dir=None))
        total = time.perf_counter() - t0 - spent["smt2"]  # the proof as it runs without the probe
    finally:
        solver.canonical_text = structural
    return total, spent["sexpr"], spent["smt2"], int(spent["n"])


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    repeat = int(next((a.split("=")[1] for a in sys.argv[1:] if a.startswith("--repeat=")), 3))
    print(f"{'example':<14} {'queries':>7} {'proof s':>8} {'sexpr s':>8} {'to_smt2 s':>9} "
          f"{'ratio':>6} {'share':>6} {'load':>5}")
    for name in args or DEFAULT:
        runs = [one_run(ROOT / "examples" / f"{name}.py") for _ in range(repeat)]
        proof, sexpr, smt2 = (statistics.median(r[k] for r in runs) for k in range(3))
        print(f"{name:<14} {runs[0][3]:>7} {proof:>8.2f} {sexpr:>8.2f} {smt2:>9.2f} "
              f"{sexpr / max(smt2, 1e-9):>6.1f} {sexpr / max(proof, 1e-9):>6.0%} "
              f"{os.getloadavg()[0]:>5.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
