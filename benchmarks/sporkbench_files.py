"""Seconds per sporkbench file as a user runs it (issue 20): `spork-verify FILE` from the
shell, the file unchanged, in its own folder, with a cold proof cache.

Usage: python3 benchmarks/sporkbench_files.py SPORKBENCH_CHECKOUT[=LABEL] ...
           [--repeat 3] [--only SUBSTRING] [--csv OUT.csv] [--spork-verify COMMAND]

Each checkout's `examples/` folder is copied to a scratch folder (the files write a .json
beside them), and every `exocc_*.py` in it is run `--repeat` times as
`cd FOLDER && spork-verify FILE --format json --no-progress`, each run with an empty
`SPORK_VERIFY_CACHE_DIR` (a first run: nothing is answered from the on-disk proof cache).
Printed per file: its procs, their verdicts, the exit status, the in-file `sync_check` calls
and how they were settled (specs/loading.md SYNC-*), the median wall seconds, the median CPU
seconds of the process and its children (the loading child, solver workers), the median
loading time (the loading child alone, measured apart with `load_isolated`) and the target
(2 s per proc + 1 s per file). The machine is shared: the load averages are printed before and
after; compare CPU seconds when it is busy. `--csv` also writes the rows (the data of
`proofs/figures.py`'s second figure).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import load_average  # noqa: E402


def spork_verify_command(given: str | None) -> list[str]:
    """The CLI as a user runs it: the console script beside this interpreter, else `-m`."""
    if given:
        return given.split()
    script = Path(sys.executable).with_name("spork-verify")
    return [str(script)] if script.exists() else [sys.executable, "-m", "verifier.cli"]


def run_once(command: list[str], path: Path) -> tuple[float, float, int, dict]:
    """(wall s, CPU s of the process tree, exit status, the JSON report) of one cold run."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "SPORK_VERIFY_CACHE_DIR": cache}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        out = subprocess.run([*command, path.name, "--format", "json", "--no-progress"],
                             cwd=path.parent, env=env, capture_output=True, text=True,
                             check=False)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        report = json.loads(out.stdout)
    except json.JSONDecodeError:
        report = {"results": [], "error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return wall, cpu, out.returncode, report


def load_seconds(path: Path) -> float:
    """The loading child alone (start-up and running the file), as the CLI spawns it."""
    from verifier.load.load_isolated import load_isolated

    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        t0 = time.perf_counter()
        load_isolated(path.name)
        return time.perf_counter() - t0
    finally:
        os.chdir(cwd)


def verdicts(report: dict) -> str:
    counts = Counter(r["verdict"] for r in report.get("results", []))
    return ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or report.get("error", "-")


def sync_checks(report: dict) -> str:
    """How the file's own sync_check calls were settled, e.g. `4 covered`."""
    counts = Counter(s["status"] for r in report.get("results", [])
                     for s in r.get("sync_checks", []))
    return ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "-"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="+", metavar="CHECKOUT[=LABEL]")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="files whose path contains this")
    ap.add_argument("--csv", type=Path)
    ap.add_argument("--spork-verify", help="the command to time (default: this venv's)")
    args = ap.parse_args(argv)
    command = spork_verify_command(args.spork_verify)
    started = datetime.datetime.now(datetime.timezone.utc)
    print(f"# {started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, --repeat {args.repeat}")
    print(f"# load average before: {load_average()}")
    header = (f"{'file':58} {'procs':>5} {'verdicts':20} {'exit':>4} {'sync_check':14} "
              f"{'wall s':>7} {'cpu s':>6} {'load s':>6} {'target':>6} ok")
    print(header)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for given in args.checkouts:
            checkout, _, label = given.partition("=")
            label = label or Path(checkout).name
            copy = Path(tmp) / label
            shutil.copytree(Path(checkout) / "examples", copy)
            for path in sorted(copy.rglob("exocc_*.py")):
                name = f"{label}/{path.relative_to(copy)}"
                if args.only not in name:
                    continue
                runs = [run_once(command, path) for _ in range(args.repeat)]
                loads = [load_seconds(path) for _ in range(args.repeat)]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                _, _, code, report = runs[-1]
                procs = len({r["proc"] for r in report.get("results", [])
                             if r["proc"] != "<file>"})
                target = 2.0 * procs + 1.0
                row = {"file": name, "procs": procs, "verdicts": verdicts(report),
                       "exit": code, "sync_check": sync_checks(report),
                       "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                       "load_s": round(statistics.median(loads), 2),
                       "target_s": target, "met": wall <= target}
                rows.append(row)
                print(f"{name:58} {procs:5} {row['verdicts']:20} {code:4} "
                      f"{row['sync_check']:14} {wall:7.2f} {cpu:6.2f} {row['load_s']:6.2f} "
                      f"{target:6.1f} {'yes' if row['met'] else 'NO'}", flush=True)
    print(f"# load average after: {load_average()}")
    if args.csv:
        with args.csv.open("w", newline="") as f:
            f.write(f"# benchmarks/sporkbench_files.py --repeat {args.repeat}, "
                    f"{started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()}-core machine, load "
                    f"average after {load_average()}\n")
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["file"])
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
