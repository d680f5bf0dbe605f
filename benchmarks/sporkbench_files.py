"""Seconds per sporkbench file as a user runs it (issue 20): `spork-verify FILE` from the
shell, the file unchanged, in its own folder, with a cold proof cache.

Usage: python3 benchmarks/sporkbench_files.py SPORKBENCH_CHECKOUT[=LABEL] ...
           [--repeat 3] [--only SUBSTRING] [--csv OUT.csv] [--spork-verify COMMAND]
           [--exo-gpu-python LABEL=PYTHON ...] [--nvcc]

Each checkout's `examples/` folder is copied to a scratch folder (the files write a .json
beside them), and every `exocc_*.py` in it is run `--repeat` times as
`cd FOLDER && spork-verify FILE --format json --no-progress`, each run with an empty
`SPORK_VERIFY_CACHE_DIR` (a first run: nothing is answered from the on-disk proof cache).
Printed per file: its procs, their verdicts, the exit status, the in-file `sync_check` calls
and how they were settled (specs/loading.md SYNC-*), the median wall seconds, the median CPU
seconds of the process and its children (the loading child, solver workers), the median CPU
seconds of loading (the loading child alone, measured apart with `load_isolated`) and the
target (2 s per proc + 1 s per file) with whether the wall time met it (`ok`) and whether the
CPU time did (`cpu ok`: on a busy machine the wall time says more about the load). The machine is shared: the load averages are printed before and
after; compare CPU seconds when it is busy. `--csv` also writes the rows (the data of
`proofs/figures.py`'s second figure).

A checkout made where git could not make symbolic links holds each as a small text file naming
its target (sporkbench's `schedule_Sm90a/template_symlink`); the copy makes them links again,
as a user's clone has them. The `schedule_Sm90a` files schedule their kernel with upstream's
rewrites: `--exo-gpu-python LABEL=PYTHON` runs that checkout's files with `--exo-gpu-python
PYTHON` (specs/upstream_api.md SCHED-*); the run that first builds upstream's checker is not
counted but run again with that build (SCHED-7 keeps it beside the proof cache, which stays
cold), as a user's second file would find it.

`--nvcc`: after the timed runs, one more run with `--emit-cuda` (its answers from the last
timed run's cache) and every emitted kernel compiled by the nvcc command its header names
(specs/codegen.md); where some proc is refuted and sporkbench's own case list (the FILE.json
the file writes) runs only `K_split_max` 1, also with `--assume K_split=1` (CLI-11), the
size sporkbench runs. Column `cuda`: kernels that compiled / procs proved.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import re
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


def restore_symlinks(folder: Path) -> list[Path]:
    """Make again each symbolic link that a checkout holds as a one-line text file naming an
    existing relative target (git's core.symlinks=false); the links made."""
    made = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 255:
            continue
        target = path.read_text(errors="replace")
        if target and "\n" not in target and target.startswith("..") and \
                (path.parent / target).exists():
            path.unlink()
            path.symlink_to(target)
            made.append(path)
    return made


def run_once(command: list[str], path: Path, cache: Path,
             extra: tuple[str, ...] = ()) -> tuple[float, float, int, dict]:
    """(wall s, CPU s of the process tree, exit status, the JSON report) of one run with the
    cache folder `cache`."""
    env = {**os.environ, "SPORK_VERIFY_CACHE_DIR": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([*command, path.name, "--format", "json", "--no-progress", *extra],
                         cwd=path.parent, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        report = json.loads(out.stdout)
    except json.JSONDecodeError:
        report = {"results": [], "error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return wall, cpu, out.returncode, report


def cold_cache(folder: Path, warm: Path | None) -> Path:
    """An empty proof cache in `folder`, holding only upstream's checker build from `warm`."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if warm is not None and (warm / "exo-gpu").is_dir():
        shutil.copytree(warm / "exo-gpu", folder / "exo-gpu", symlinks=True)
    return folder


_NVCC_LINE = re.compile(r"^// nvcc target \S+: (?P<cmd>nvcc .*) -c FILE\.cu$", re.M)


def compile_emitted(command: list[str], path: Path, cache: Path,
                    extra: tuple[str, ...]) -> tuple[int, int, list[str]]:
    """(kernels nvcc compiled, procs proved, what failed) of a run with --emit-cuda."""
    with tempfile.TemporaryDirectory() as out:
        *_, report = run_once(command, path, cache, ("--emit-cuda", out, *extra))
        proved = [r["proc"] for r in report.get("results", []) if r["verdict"] == "proved"]
        ok, failed = 0, []
        for proc in proved:
            cu = Path(out) / f"{proc}.cu"
            line = _NVCC_LINE.search(cu.read_text()) if cu.exists() else None
            if line is None:
                failed.append(f"{proc}: {'no nvcc line' if cu.exists() else 'not emitted'}")
                continue
            built = subprocess.run([*line["cmd"].split(), "-c", str(cu), "-o",
                                    str(cu.with_suffix(".o"))], capture_output=True,
                                   text=True, check=False)
            if built.returncode == 0 and "warning" not in built.stderr:
                ok += 1
            else:
                failed.append(f"{proc}: {(built.stderr.strip().splitlines() or ['?'])[-1]}")
    return ok, len(proved), failed


def sporkbench_runs_k_split_1(path: Path) -> bool:
    """Sporkbench's own case list (FILE.json, written by the run) has K_split_max 1 only."""
    cases = path.with_name(path.name + ".json")
    try:
        listed = json.loads(cases.read_text())
    except (OSError, ValueError):
        return False
    return bool(listed) and all(isinstance(c, dict) and c.get("K_split_max") == 1
                                for c in listed)


def cuda_column(command: list[str], path: Path, cache: Path, extra: tuple[str, ...],
                report: dict) -> tuple[str, list[str]]:
    """The `cuda` column and the failures behind it (see --nvcc)."""
    ok, proved, failed = compile_emitted(command, path, cache, extra)
    text = f"{ok}/{proved}"
    # the proc's own name for it: K_split (Sm90a), K_splits (Sm80)
    names = sorted({k for r in report.get("results", []) if r["verdict"] == "refuted"
                    for f in r.get("findings", [])
                    for k in ((f.get("counterexample") or {}).get("sizes") or {})
                    if k.startswith("K_split")})
    if sporkbench_runs_k_split_1(path) and len(names) == 1:
        ok1, proved1, failed1 = compile_emitted(command, path, cache,
                                                (*extra, "--assume", f"{names[0]}=1"))
        text += f", {names[0]}=1: {ok1}/{proved1}"
        failed += [f"({names[0]}=1) {f}" for f in failed1]
    return text, failed


def load_seconds(path: Path) -> float:
    """CPU seconds of the loading child alone (start-up and running the file), as the CLI
    spawns it."""
    from verifier.load.load_isolated import load_isolated

    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_isolated(path.name)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    finally:
        os.chdir(cwd)


def verdicts(report: dict) -> str:
    counts = Counter(r["verdict"] for r in report.get("results", []))
    return ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or report.get("error", "-")


def counterexamples(report: dict) -> str:
    """Each refuted proc's first replayed hazard and its sizes, e.g.
    `P: WAW C at K_split=2 L=1` (what upstream's sync_check is asked about, issue 18)."""
    out = []
    for r in report.get("results", []):
        for f in r.get("findings", []):
            cex = f.get("counterexample") or {}
            if r["verdict"] == "refuted" and cex.get("replayed"):
                sizes = " ".join(f"{k}={v}" for k, v in sorted(cex.get("sizes", {}).items()))
                out.append(f"{r['proc']}: {f.get('kind')} {f.get('variable')} at {sizes}")
                break
    return "; ".join(out)


def sync_checks(report: dict) -> str:
    """How the file's own sync_check calls were settled, e.g. `4 covered`."""
    counts = Counter(s["status"] for r in report.get("results", [])
                     for s in r.get("sync_checks", []))
    return ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "-"


def write_rows(path: Path, rows: list[dict], argv: list[str], started: datetime.datetime,
               load_before: str) -> None:
    """The CSV of `proofs/figures.py`'s second figure: the command, when and on what."""
    with path.open("w", newline="") as f:
        f.write(f"# {' '.join(argv)}\n# measured {started:%Y-%m-%d %H:%M}-"
                f"{datetime.datetime.now(datetime.timezone.utc):%H:%M} UTC on "
                f"{os.cpu_count()} CPUs, load average before {load_before}, now "
                f"{load_average()}\n")
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def public_argv(argv: list[str]) -> list[str]:
    """The command line to print, each machine path as a name: `CHECKOUT=main` becomes
    `SPORKBENCH_MAIN=main`, `main=PYTHON` becomes `main=UPSTREAM_PYTHON_MAIN`."""
    out = ["python3", "benchmarks/sporkbench_files.py"]
    for arg in argv:
        left, sep, right = arg.partition("=")
        if sep and left.startswith("/"):
            arg = f"SPORKBENCH_{right.upper()}={right}"
        elif sep and right.startswith("/"):
            arg = f"{left}=UPSTREAM_PYTHON_{left.upper()}"
        elif arg.startswith("/"):
            inside = Path(arg).is_relative_to(ROOT)
            arg = str(Path(arg).relative_to(ROOT)) if inside else f"OUT{Path(arg).suffix}"
        out.append(arg)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="+", metavar="CHECKOUT[=LABEL]")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="files whose path contains this")
    ap.add_argument("--csv", type=Path)
    ap.add_argument("--spork-verify", help="the command to time (default: this venv's)")
    ap.add_argument("--exo-gpu-python", action="append", default=[], metavar="LABEL=PYTHON",
                    help="run that checkout's files with --exo-gpu-python PYTHON")
    ap.add_argument("--nvcc", action="store_true",
                    help="emit CUDA for the proved procs and compile it (column `cuda`)")
    args = ap.parse_args(argv)
    command = spork_verify_command(args.spork_verify)
    exo_gpu = dict(given.split("=", 1) for given in args.exo_gpu_python)
    started = datetime.datetime.now(datetime.timezone.utc)
    print(f"# {started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, --repeat {args.repeat}")
    print(f"# command: {' '.join(public_argv(argv))}")
    load_before = load_average()
    print(f"# load average before: {load_before}")
    header = (f"{'file':58} {'procs':>5} {'verdicts':20} {'exit':>4} {'sync_check':14} "
              f"{'wall s':>7} {'cpu s':>6} {'load s':>6} {'target':>6} ok  cpu ok"
              + ("  cuda" if args.nvcc else ""))
    print(header)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for given in args.checkouts:
            checkout, _, label = given.partition("=")
            label = label or Path(checkout).name
            copy = Path(tmp) / label
            shutil.copytree(Path(checkout) / "examples", copy, symlinks=True)
            restore_symlinks(copy)
            extra = ("--exo-gpu-python", exo_gpu[label]) if label in exo_gpu else ()
            warm = Path(tmp) / f"warm-{label}"
            for path in sorted(copy.rglob("exocc_*.py")):
                name = f"{label}/{path.relative_to(copy)}"
                if args.only not in name:
                    continue
                cache = Path(tmp) / "cache"
                runs = []
                while len(runs) < args.repeat:
                    runs.append(run_once(command, path, cold_cache(cache, warm), extra))
                    if extra and (cache / "exo-gpu").is_dir() and not warm.is_dir():
                        # that run built upstream's checker: keep the build, run again
                        shutil.copytree(cache / "exo-gpu", warm / "exo-gpu", symlinks=True)
                        runs.pop()
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
                       "target_s": target, "met": wall <= target, "cpu_met": cpu <= target}
                row["refuted_at"] = counterexamples(report)
                if args.nvcc:
                    row["cuda"], failed = cuda_column(command, path, cache, extra, report)
                rows.append(row)
                print(f"{name:58} {procs:5} {row['verdicts']:20} {code:4} "
                      f"{row['sync_check']:14} {wall:7.2f} {cpu:6.2f} {row['load_s']:6.2f} "
                      f"{target:6.1f} {'yes' if row['met'] else 'NO':3} "
                      f"{'yes' if row['cpu_met'] else 'NO':6}"
                      + (f"  {row['cuda']}" if args.nvcc else ""), flush=True)
                for refuted in filter(None, row["refuted_at"].split("; ")):
                    print(f"#   refuted: {refuted}", flush=True)
                for failure in failed if args.nvcc else ():
                    print(f"#   cuda: {failure}", flush=True)
                if args.csv:  # after each file: a run cut short keeps what it measured
                    write_rows(args.csv, rows, public_argv(argv), started, load_before)
    print(f"# load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
