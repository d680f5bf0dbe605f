"""Issue 11 ("Seconds, every time"), every number in one run, with the machine load of each
phase (the machine is shared and noisy: read the load column).

1. gemm_sm80 cold proof: median of N (`--jobs 1`, no proof cache, in-process answers cleared
   before each run), then again with 3 CPU-bound processes beside it; verdicts must agree.
2. Mutation campaign (benchmarks/mutants.py) over every correct example and test program:
   verdict and wall time of each mutant; refutation median and maximum, replay status,
   undecided count.
3. sporkbench Sm80 dataParallel split-K WAW race, when a checkout is given.
4. Ping-pong kernels of P fenced phases (proved) and a 150-phase one with one fence removed
   (refuted).

    python benchmarks/issue11.py [--repeat 3] [--hogs 3] [--sporkbench CHECKOUT]
                                 [--phases 50,150,300] [--only gemm,mutants,sporkbench,scale]
                                 [--limit N] [--csv FILE]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from mutants import Mutant, mutants, ping_pong  # noqa: E402
from verifier.diagnostics import SporkError  # noqa: E402
from verifier.encode import Options, verify_proc  # noqa: E402
from verifier.encode.discharge import clear_cache  # noqa: E402
from verifier.lang.ir import ir  # noqa: E402
from verifier.load.load import load_procs  # noqa: E402
from verifier.results import ProcResult, Verdict  # noqa: E402

GEMM = ROOT / "examples" / "gemm_sm80.py"
CORRECT = ["examples", "tests/programs", "tests/programs_async", "tests/programs_nests"]
SPLIT_K = ("examples/Sm80_gemm/exocc_Sm80_m128n256k16_m64n64_dataParallel.py",
           "examples/Sm80_gemm/exocc_Sm80_m128n128k16_m64n64_dataParallel.py")


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def cold(proc: ir.Proc) -> tuple[float, ProcResult]:
    seconds, _, result = cold_cpu(proc)
    return seconds, result


def cold_cpu(proc: ir.Proc) -> tuple[float, float, ProcResult]:
    """(wall s, CPU s of this process, result) of one proof without cached answers; the CPU
    time is what the load inflates least."""
    clear_cache()
    t0, c0 = time.perf_counter(), time.process_time()
    result = verify_proc(proc, Options(jobs=1))
    return time.perf_counter() - t0, time.process_time() - c0, result


def verify_file(path: Path) -> list[tuple[str, str, float, ProcResult | None]]:
    """(proc, verdict, seconds, result) of every proc of a file, cold; a file that does not
    load or is rejected statically gives its static verdict."""
    out = []
    try:
        procs = [p for p in load_procs(path) if isinstance(p, ir.Proc)]
    except SporkError as e:
        return [("<file>", "rejected" if "ERR-" in (e.code or "") else "unsupported", 0.0, None)]
    for p in procs:
        try:
            seconds, result = cold(p)
        except SporkError:
            out.append((p.name, "rejected", 0.0, None))
            continue
        out.append((p.name, result.verdict.value, seconds, result))
    return out


# ---------------------------------------------------------------- 1. gemm_sm80

def gemm(repeat: int, hogs: int) -> None:
    (proc,) = [p for p in load_procs(GEMM) if isinstance(p, ir.Proc)]
    print(f"\n## gemm_sm80 cold proof (target: proved, median <= 2 s, same verdict loaded)")
    print(f"{'phase':<22} {'median s':>9} {'runs s':>22} {'cpu s':>6} {'verdict':>9} "
          f"{'obls':>5} {'units (M)':>10} {'load1':>6}")

    def phase(label: str) -> None:
        runs = [cold_cpu(proc) for _ in range(repeat)]
        times = [t for t, _, _ in runs]
        verdicts = "/".join(sorted({r.verdict.value for _, _, r in runs}))
        result = runs[0][2]
        units = sum(o.rlimit for o in result.obligations) / 1e6
        print(f"{label:<22} {statistics.median(times):>9.2f} "
              f"{', '.join(f'{t:.2f}' for t in times):>22} "
              f"{statistics.median(c for _, c, _ in runs):>6.2f} {verdicts:>9} "
              f"{len(result.obligations):>5} {units:>10.2f} {load():>6}")

    phase("as is")
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
    try:
        time.sleep(1.0)
        phase(f"with {hogs} CPU hogs")
    finally:
        for h in procs:
            h.kill()
            h.wait()


# ---------------------------------------------------------------- 2. mutation campaign

def correct_programs() -> list[Path]:
    out = []
    for folder in CORRECT:
        for path in sorted((ROOT / folder).glob("*.py")):
            text = path.read_text()
            if "# expect:" in text and all(" proved" in line for line in text.splitlines()
                                           if line.startswith("# expect:")):
                out.append(path)
    return out


def campaign(limit: int | None, csv_path: str | None) -> None:
    pool: list[Mutant] = [m for path in correct_programs() for m in mutants(path)]
    if limit:
        pool = pool[:: max(1, len(pool) // limit)][:limit]
    print(f"\n## mutation campaign: {len(pool)} mutants of {len(correct_programs())} correct "
          f"programs (target: refutation median <= 1 s, max <= 10 s, all replayed, none "
          f"undecided); load at start {load()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, m in enumerate(pool):
            path = Path(tmp) / f"mutant{k}.py"
            path.write_text(m.text)
            for proc, verdict, seconds, result in verify_file(path):
                replayed = "" if result is None or result.verdict is not Verdict.refuted else \
                    str(all(f.counterexample is None or f.counterexample.replayed
                            for f in result.findings if f.counterexample is not None))
                rows.append((str(m.source.relative_to(ROOT)), m.line, m.what, proc, verdict,
                             seconds, replayed))
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            csv.writer(f).writerows([("file", "line", "what", "proc", "verdict", "seconds",
                                      "replayed")] + rows)
    refuted = [r[5] for r in rows if r[4] == "refuted"]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r[4]] = counts.get(r[4], 0) + 1
    print("verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    if refuted:
        print(f"refuted: {len(refuted)}, median {statistics.median(refuted):.2f} s, "
              f"max {max(refuted):.2f} s, over 1 s: {sum(t > 1 for t in refuted)}, "
              f"over 10 s: {sum(t > 10 for t in refuted)}, not replayed: "
              f"{sum(r[6] == 'False' for r in rows)}")
    slow = sorted(rows, key=lambda r: -r[5])[:8]
    print("slowest: " + "; ".join(f"{r[0]}:{r[1]} {r[2]} {r[4]} {r[5]:.1f}s" for r in slow))
    undecided = [r for r in rows if r[4] in ("unknown",)]
    for r in undecided:
        print(f"undecided: {r[0]}:{r[1]} {r[2]} {r[3]} ({r[5]:.1f}s)")
    print(f"load at end {load()}")


# ---------------------------------------------------------------- 3. sporkbench split-K

def sporkbench(checkout: Path | None) -> None:
    print("\n## sporkbench Sm80 dataParallel split-K WAW race (target: refuted <= 5 s)")
    if checkout is None:
        print("not measured (give --sporkbench CHECKOUT)")
        return
    from verifier.load.load_isolated import load_isolated

    print(f"{'proc':<58} {'verdict':>8} {'s':>7} {'refuted obligation':>24} {'load1':>6}")
    for rel in SPLIT_K:
        loaded = load_isolated(checkout / rel)
        for p in loaded.procs:
            if not isinstance(p, ir.Proc):
                continue
            seconds, result = cold(p)
            bad = [o.id for o in result.obligations if o.status.value == "refuted"]
            print(f"{p.name:<58} {result.verdict.value:>8} {seconds:>7.2f} "
                  f"{(bad[0] if bad else '-'):>24} {load():>6}")


# ---------------------------------------------------------------- 4. scale

def scale(phases: list[int]) -> None:
    print("\n## ping-pong scale (target: proved, near-linear, <= 60 s at P = 300; 150 phases "
          "with one fence removed refuted <= 60 s)")
    print(f"{'kernel':<22} {'verdict':>8} {'s':>8} {'s/phase':>8} {'obls':>6} {'solved':>7} "
          f"{'load1':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(f"P={p}", ping_pong(p)) for p in phases] + \
            [("P=150, fence 75 cut", ping_pong(150, 75))]
        for label, text in cases:
            path = Path(tmp) / "ping_pong.py"
            path.write_text(text)
            ((_, verdict, seconds, result),) = verify_file(path)
            p = int(label.split(",")[0][2:])
            solved = sum(1 for o in result.obligations if not o.discharged_by) if result else 0
            count = len(result.obligations) if result else 0
            print(f"{label:<22} {verdict:>8} {seconds:>8.2f} {seconds / p:>8.3f} {count:>6} "
                  f"{solved:>7} {load():>6}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--hogs", type=int, default=3)
    ap.add_argument("--sporkbench", type=Path)
    ap.add_argument("--phases", default="50,150,300")
    ap.add_argument("--only", default="gemm,mutants,sporkbench,scale")
    ap.add_argument("--limit", type=int, help="run about this many mutants, evenly spread")
    ap.add_argument("--csv", help="write every mutant's row here")
    args = ap.parse_args()
    only = set(args.only.split(","))
    print(f"issue 11 benchmarks: {os.cpu_count()} CPUs, load {load()} "
          f"(shared machine: times vary with the load)")
    if "gemm" in only:
        gemm(args.repeat, args.hogs)
    if "mutants" in only:
        campaign(args.limit, args.csv)
    if "sporkbench" in only:
        sporkbench(args.sporkbench)
    if "scale" in only:
        scale([int(p) for p in args.phases.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
