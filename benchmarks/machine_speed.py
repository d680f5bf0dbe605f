"""The concrete abstract machine where it must run whole (issue 11, `--sizes` runs): gemm_sm80
at M = N = K = 128 and 256, ours against upstream's C++ checker (`Procedure.sync_check`) on the
same kernel and sizes; then each seeded GEMM bug: the whole verification and, apart, a
collect-all replay at the counterexample's sizes, whole and targeted at the error's variable
(Choice M8).

    python benchmarks/machine_speed.py [--repeat 3] [--sizes 128,256]
                                       [--upstream-python PYTHON] [--no-replays]
                                       [--no-sizes]

`--upstream-python` is an interpreter in which upstream's `exo` (exo-lang, the camspork JIT
branch) imports. The kernel is run there as a file, unchanged except for its import line
(`from exo import *` and the CUDA platforms instead of `verifier.lang`), with
CAMSPORK_JIT_DIR pointing at a scratch folder; one warm-up `sync_check` (which builds the
JIT) is not timed. Each side runs in its own child process; the table gives medians of wall
and CPU (process) time and their ratio. The machine is shared and noisy: the load average is
printed with every row, and CPU time is the fairer comparison when the load is high.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from harness import child_json, load_average

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "examples" / "gemm_sm80.py"
BUGS = sorted((ROOT / "examples").glob("gemm_sm80_bug_*.py"))
UPSTREAM_IMPORTS = ("from __future__ import annotations\nfrom exo import *\n"
                    "from exo.platforms.cuda import *\nfrom exo.platforms.Sm80 import *\n")

OURS = """
import json, sys, time
from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.semantics import run_machine
(p,) = [p for p in load_procs(sys.argv[1]) if isinstance(p, ir.Proc)]
n = int(sys.argv[2])
w0, c0 = time.perf_counter(), time.process_time()
holds, findings = run_machine(p, {"M": n, "N": n, "K": n})
print(json.dumps([time.perf_counter() - w0, time.process_time() - c0,
                  [f.kind for f in findings]]))
"""

UPSTREAM_MAIN = """

if __name__ == "__main__":
    import json, sys, time
    warm, n = int(sys.argv[1]), int(sys.argv[2])
    gemm_sm80.sync_check(M=warm, N=warm, K=warm)  # builds the JIT; not timed
    w0, c0 = time.perf_counter(), time.process_time()
    gemm_sm80.sync_check(M=n, N=n, K=n)
    print(json.dumps([time.perf_counter() - w0, time.process_time() - c0]))
"""

REPLAY = """
import json, sys, time
from verifier.encode import verify_proc
from verifier.lang.ir import ir
from verifier.load.load import load_procs
(p,) = [p for p in load_procs(sys.argv[1]) if isinstance(p, ir.Proc)]
w0 = time.perf_counter()
r = verify_proc(p)
wall = time.perf_counter() - w0
found = [f for f in r.findings if f.counterexample is not None]
whole = targeted = None
if found:
    from verifier.semantics import run_machine
    sizes, var = found[0].counterexample.sizes, found[0].variable
    c0 = time.process_time()
    run_machine(p, sizes, collect_all=True)
    whole = time.process_time() - c0
    c0 = time.process_time()
    run_machine(p, sizes, collect_all=True, only=frozenset({var}) if var else None)
    targeted = time.process_time() - c0
print(json.dumps([r.verdict.value, wall, found[0].counterexample.sizes if found else None,
                  bool(found and found[0].counterexample.replayed), whole, targeted]))
"""


def ours(n: int) -> tuple[float, float]:
    wall, cpu, kinds = child_json([sys.executable, "-c", OURS, str(GEMM), str(n)],
                                  {**os.environ, "PYTHONPATH": str(ROOT)})
    assert not kinds, f"gemm_sm80 at {n}^3: the machine reports {kinds}"
    return wall, cpu


def upstream(python: str, n: int, scratch: Path) -> tuple[float, float]:
    text = GEMM.read_text().replace("from verifier.lang import *\n", UPSTREAM_IMPORTS, 1)
    script = scratch / "gemm_sm80_upstream.py"
    script.write_text(text + UPSTREAM_MAIN)
    env = {**os.environ, "CAMSPORK_JIT_DIR": str(scratch / "jit")}
    env.pop("PYTHONPATH", None)
    wall, cpu = child_json([python, str(script), "128", str(n)], env, cwd=scratch)
    return wall, cpu


def median_pair(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def sizes_table(args: argparse.Namespace) -> None:
    print(f"gemm_sm80 concrete runs, median of {args.repeat}; load average (1, 5, 15 min) "
          "per row; shared noisy machine: compare CPU time")
    print(f"{'M=N=K':>6} {'ours wall s':>12} {'ours CPU s':>11} {'upstream wall s':>16} "
          f"{'upstream CPU s':>15} {'wall ratio':>11} {'CPU ratio':>10}  load")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            ow, oc = median_pair([ours(n) for _ in range(args.repeat)])
            if args.upstream_python:
                uw, uc = median_pair([upstream(args.upstream_python, n, Path(tmp))
                                      for _ in range(args.repeat)])
                up = f"{uw:16.3f} {uc:15.3f} {ow / uw:11.1f} {oc / uc:10.1f}"
            else:
                up = f"{'not measured (no --upstream-python)':>55}"
            print(f"{n:>6} {ow:12.2f} {oc:11.2f} {up}  {load_average()}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="128,256")
    ap.add_argument("--upstream-python", default=None)
    ap.add_argument("--no-replays", action="store_true")
    ap.add_argument("--no-sizes", action="store_true", help="only the seeded-bug replays")
    args = ap.parse_args(argv)
    if not args.no_sizes:
        sizes_table(args)
    if args.no_replays:
        return 0
    print("\nseeded GEMM bugs: whole verification (proof + replay at the counterexample's "
          "sizes), one run each")
    print(f"{'file':38} {'verdict':8} {'verify wall s':>13} {'replayed':>8} "
          f"{'whole CPU s':>11} {'targeted CPU s':>14}  sizes  load")
    for bug in BUGS:
        verdict, wall, sizes, replayed, whole, targeted = child_json(
            [sys.executable, "-c", REPLAY, str(bug)], {**os.environ, "PYTHONPATH": str(ROOT)})
        runs = f"{whole:11.2f} {targeted:14.2f}" if whole is not None else f"{'-':>11} {'-':>14}"
        print(f"{bug.name:38} {verdict:8} {wall:13.1f} {str(replayed):>8} {runs}  {sizes}  "
              f"{load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
