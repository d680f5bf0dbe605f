"""What printing the query texts costs: `python benchmarks/query_text.py [EXAMPLE...]`.

Query texts are printed from the term DAG (`smtlib.canonical_text`: shared closed sub-terms
defined once) so that a query hash is the same in every process (`--check-cert` re-runs the
proof). For comparison, z3's structural printer (`Solver.sexpr()`, the fallback and the printer
before issue 11's second pass) and z3's benchmark printer (`to_smt2`, after a copy into a fresh
context: cheap, but it let-binds by reference counts, so it is not canonical). For each example
this proves every proc without the proof cache, times the three printers on every query the
proof builds, and prints the medians of `--repeat` runs (default 3) with the proof time (the DAG
printer included, the other two not), the text sizes and the machine's load: the machine is
shared and noisy, read ratios only.
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
from verifier.encode.discharge import clear_cache  # noqa: E402
from verifier.encode.smtlib import _z3_text  # noqa: E402
from verifier.load.load import load_procs  # noqa: E402

DEFAULT = ["saxpy", "smem_matmul", "ws_ring", "gemm_sm80_ws", "gemm_sm80"]
PRINTERS = ("dag", "sexpr", "smt2")


def refcount_printer(constraints: list[z3.BoolRef]) -> str:
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    s.add(*[c.translate(ctx) for c in constraints])
    return s.to_smt2()


def one_run(path: Path) -> tuple[float, dict[str, float], dict[str, int], int]:
    """(proof s, seconds per printer, characters per printer, queries) of one cold proof."""
    spent = dict.fromkeys(PRINTERS, 0.0)
    chars = dict.fromkeys(PRINTERS, 0)
    count = [0]
    dag = solver.canonical_text
    others = {"sexpr": _z3_text, "smt2": refcount_printer}

    def timed(constraints: list[z3.BoolRef]) -> str:
        t0 = time.perf_counter()
        text = dag(constraints)
        spent["dag"] += time.perf_counter() - t0
        chars["dag"] += len(text)
        for name, printer in others.items():
            t0 = time.perf_counter()
            chars[name] += len(printer(constraints))
            spent[name] += time.perf_counter() - t0
        count[0] += 1
        return text

    solver.canonical_text = timed
    try:
        clear_cache()
        t0 = time.perf_counter()
        for proc in load_procs(path):
            verify_proc(proc, Options(cache_dir=None))
        # the proof as it runs without the probe
        total = time.perf_counter() - t0 - spent["sexpr"] - spent["smt2"]
    finally:
        solver.canonical_text = dag
    return total, spent, chars, count[0]


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    repeat = int(next((a.split("=")[1] for a in sys.argv[1:] if a.startswith("--repeat=")), 3))
    print(f"{'example':<14} {'queries':>7} {'proof s':>8} {'dag s':>6} {'sexpr s':>8} "
          f"{'to_smt2 s':>9} {'sexpr/dag':>9} {'dag share':>9} {'dag kB':>7} {'sexpr kB':>8} "
          f"{'load':>5}")
    for name in args or DEFAULT:
        runs = [one_run(ROOT / "examples" / f"{name}.py") for _ in range(repeat)]
        proof = statistics.median(r[0] for r in runs)
        dag, sexpr, smt2 = (statistics.median(r[1][p] for r in runs) for p in PRINTERS)
        chars = runs[0][2]
        print(f"{name:<14} {runs[0][3]:>7} {proof:>8.2f} {dag:>6.2f} {sexpr:>8.2f} "
              f"{smt2:>9.2f} {sexpr / max(dag, 1e-9):>9.1f} {dag / max(proof, 1e-9):>9.0%} "
              f"{chars['dag'] / 1000:>7.0f} {chars['sexpr'] / 1000:>8.0f} "
              f"{os.getloadavg()[0]:>5.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
