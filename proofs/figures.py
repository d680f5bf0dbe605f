"""The figures of the README: `python proofs/figures.py` (needs `pip install -e '.[figures]'`).

1. `docs/pictures/sync_check_vs_proof.{png,svg}`: sporkbench's sync_check figure
   (examples/Sm90a_gemm/benchmark_sync_check.py and plot_sync_check.py): upstream's
   `sync_check` time against the problem size M = N = K for its three kernels, log-log, with
   spork-verify's one proof for all sizes of each kernel drawn as a flat line.
2. `docs/pictures/sporkbench_files.{png,svg}`: seconds per sporkbench file as a user runs it
   (`spork-verify FILE`, cold), against the target of 2 s per proc + 1 s per file.

Every point is measured, never typed. Each figure reads a CSV under `proofs/data/` whose
header says when, where and how it was measured; the options measure it again first:

* `--upstream-python PYTHON --sporkbench CHECKOUT` (with `CAMSPORK_JIT_DIR` set, or
  `--camspork-jit-dir`): upstream's points, in PYTHON (an Exo-GPU that builds sporkbench's
  kernels: akeley98/camspork_jit), one timed call per point after an untimed warm-up (the
  original averages 5 after a warm-up); a size whose time, extrapolated from the last one
  (n^3 for the GEMMs, n^2 for the gemv), exceeds `--point-budget` seconds is skipped and said
  so in the CSV. Writes `proofs/data/sync_check_upstream.csv`.
* `--sporkbench CHECKOUT`: spork-verify's proof of each kernel, as `spork-verify FILE --proc
  NAME` runs it with a cold cache (median of `--repeat`; the whole command: start-up, loading
  the file, the proof). Writes `proofs/data/sync_check_proof.csv`.
* the files' CSV comes from `python benchmarks/sporkbench_files.py ... --csv
  proofs/data/sporkbench_files.csv`.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "proofs" / "data"
PICTURES = ROOT / "docs" / "pictures"
UPSTREAM_CSV = DATA / "sync_check_upstream.csv"
PROOF_CSV = DATA / "sync_check_proof.csv"
FILES_CSV = DATA / "sporkbench_files.csv"
UPSTREAM_HEADER = ["kernel", "n", "cpu_s", "wall_s", "runs", "measured", "load"]
SIZES = (512, 680, 856, 1024, 1536, 2048, 3072, 4096)  # benchmark_sync_check.py's
K_SPLIT = 4  # benchmark_sync_check.py's split-K kernel

# label (upstream's), colour and marker (plot_sync_check.py's), and spork-verify's run of it:
# the file that builds the same proc, the proc, and the sizes upstream's benchmark fixes
KERNELS = {
    "non-split-k sm_90a gemm": ("darkblue", "o", "Sm90a_gemm/exocc_Sm90a_m128n256_rmemC.py",
                                "xgemm_Sm90a_r4_m2n1_m128n256_rmemC", "K_split=1"),
    f"split-k sm_90a gemm (K_split={K_SPLIT})": (
        "deepskyblue", "o", "Sm90a_gemm/exocc_Sm90a_m128n256_splitK.py",
        "xgemm_Sm90a_r4_m2n1_m128n256_splitK", ""),
    "gemv": ("darkred", "x", "gemv/exocc_Sm80_gemv.py", "gemv_warp_coop_8", ""),
}

# Run by upstream's Python in a copy of sporkbench's examples/Sm90a_gemm: the kernels of
# benchmark_sync_check.py, each size timed once after a warm-up; one JSON line per point.
UPSTREAM_CHILD = r"""
import json, os, sys, time
folder, sizes, budget, repeat, k_split, only = json.loads(sys.argv[1])
sys.path[:0] = [folder, os.path.join(folder, "..", "gemv")]
from template.make_Sm90a_gemm import make_Sm90a_gemm, Sm90aGemmConfig
from exocc_Sm80_gemv import gemv_warp_coop_8
kernels = [
    ("non-split-k sm_90a gemm", 3, make_Sm90a_gemm(Sm90aGemmConfig(
        128, 256, tma_to_gmem=False, enable_split_k=False), 2, 1),
     lambda n: dict(L=1, M=n, N=n, cluster_K=n, K_split=1)),
    ("split-k sm_90a gemm (K_split=%d)" % k_split, 3, make_Sm90a_gemm(Sm90aGemmConfig(
        128, 256, tma_to_gmem=True, enable_split_k=True), 2, 1),
     lambda n: dict(L=1, M=n, N=n, cluster_K=n // k_split, K_split=k_split)),
    ("gemv", 2, gemv_warp_coop_8, lambda n: dict(M=n, K=n)),
]
for label, power, p, args in kernels:
    if only and label not in only:
        continue
    p.sync_check(**args(512))  # warm-up, untimed (the original warms up with a first pass)
    last = None
    for n in sizes:
        if last is not None and last[1] * (n / last[0]) ** power > budget:
            print("POINT", json.dumps([label, n, None, None, 0]), flush=True)
            continue
        times = []
        for _ in range(repeat):
            t, c = time.perf_counter(), time.process_time()
            p.sync_check(**args(n))
            times.append((time.process_time() - c, time.perf_counter() - t))
        times.sort()
        cpu, wall = times[len(times) // 2]
        last = (n, cpu)
        print("POINT", json.dumps([label, n, cpu, wall, repeat]), flush=True)
"""


def machine_words() -> str:
    """What the numbers were measured on (no host name)."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} CPUs{' (' + model + ')' if model else ''}, "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def write_csv(path: Path, header: list[str], rows: list[list[object]],
              comments: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        for line in comments:
            f.write(f"# {line}\n")
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def read_csv(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """The rows and the `#` comment lines of a CSV written by `write_csv`."""
    lines = path.read_text().splitlines()
    comments = [line[2:] for line in lines if line.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(line for line in lines
                                                     if not line.startswith("#")))))
    return rows, comments


def examples_copy(checkout: Path, tmp: Path) -> Path:
    """sporkbench's examples/ in `tmp` (the files write a .json beside them); a symlink that
    a checkout stored as text (gemv_for_benchmark.py) is left as it is."""
    copy = tmp / "examples"
    shutil.copytree(checkout / "examples", copy)
    return copy


def measure_upstream(python: str, checkout: Path, jit: str | None, sizes: list[int],
                     budget: float, repeat: int, kernels: list[str]) -> None:
    env = dict(os.environ)
    if jit:
        env["CAMSPORK_JIT_DIR"] = jit
    if not env.get("CAMSPORK_JIT_DIR"):
        raise SystemExit("set CAMSPORK_JIT_DIR (or --camspork-jit-dir): where upstream's "
                         "camspork library is built")
    version = subprocess.run([python, "-c", "import sys, exo; print(sys.version.split()[0], "
                              "getattr(exo, '__version__', '?'))"], capture_output=True,
                             text=True, env=env, check=False).stdout.strip()
    started = datetime.datetime.now(datetime.timezone.utc)
    notes = [
        "upstream sync_check time per call, M = N = K = n (sporkbench "
        "examples/Sm90a_gemm/benchmark_sync_check.py's kernels and sizes)",
        f"measured by proofs/figures.py --upstream-python (last run {started:%Y-%m-%d %H:%M} "
        f"UTC); upstream Python and exo: {version}; machine: {machine_words()}",
        "one timed call per point (median of `runs`) after an untimed warm-up (the original "
        "averages 5 wall-clock runs); `measured` (UTC) and `load` (the load averages then) "
        "per point; a size missing was skipped: its CPU time extrapolated from the previous "
        f"size exceeded the run's --point-budget ({budget:g} s)"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = examples_copy(checkout, Path(tmp)) / "Sm90a_gemm"
        # run where upstream's JIT keeps its build: ninja's log is written to the working
        # folder, and without it ninja rebuilds the whole library (minutes)
        child = subprocess.Popen([python, "-c", UPSTREAM_CHILD, json.dumps(
            [str(folder), sizes, budget, repeat, K_SPLIT, kernels])],
            cwd=env["CAMSPORK_JIT_DIR"], env=env, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("POINT "):
                label, n, cpu, wall, runs = json.loads(line[6:])
                print(f"upstream {label} n={n}: " +
                      (f"{cpu:.2f} s CPU, {wall:.2f} s wall" if cpu is not None else
                       "skipped"), flush=True)
                if cpu is not None:  # kept at once: a long run may be cut short
                    _save_point([label, n, f"{cpu:.4f}", f"{wall:.4f}", runs,
                                 f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}",
                                 " ".join(f"{x:.2f}" for x in os.getloadavg())], notes)
        if child.wait() != 0:
            raise SystemExit(f"upstream's run failed (exit status {child.returncode})")


def _save_point(row: list[object], notes: list[str]) -> None:
    """`row` in the upstream CSV, replacing an earlier measurement of the same point."""
    rows = [row]
    if UPSTREAM_CSV.exists():
        rows += [[r[k] for k in UPSTREAM_HEADER] for r in read_csv(UPSTREAM_CSV)[0]
                 if (r["kernel"], r["n"]) != (str(row[0]), str(row[1]))]
    rows.sort(key=lambda r: (list(KERNELS).index(str(r[0])), int(r[1])))
    write_csv(UPSTREAM_CSV, UPSTREAM_HEADER, rows, notes)


def measure_proofs(checkout: Path, repeat: int) -> None:
    """spork-verify's all-sizes proof of each kernel, as a user runs it, cold."""
    script = Path(sys.executable).with_name("spork-verify")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "verifier.cli"]
    started = datetime.datetime.now(datetime.timezone.utc)
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        examples = examples_copy(checkout, Path(tmp))
        for label, (_, _, file, proc, assume) in KERNELS.items():
            path = examples / file
            walls, cpus, verdict = [], [], ""
            for _ in range(repeat):
                with tempfile.TemporaryDirectory() as cache:
                    argv = [*command, path.name, "--proc", proc, "--format", "json",
                            "--no-progress", *(["--assume", assume] if assume else [])]
                    before = os.times()
                    t = time.perf_counter()
                    out = subprocess.run(argv, cwd=path.parent, capture_output=True, text=True,
                                         env={**os.environ, "SPORK_VERIFY_CACHE_DIR": cache},
                                         check=False)
                    walls.append(time.perf_counter() - t)
                    after = os.times()
                    cpus.append(after.children_user + after.children_system -
                                before.children_user - before.children_system)
                verdict = json.loads(out.stdout)["results"][0]["verdict"]
            print(f"spork-verify {label}: {verdict}, {statistics.median(walls):.2f} s",
                  flush=True)
            rows.append([label, proc, assume, verdict, f"{statistics.median(walls):.3f}",
                         f"{statistics.median(cpus):.3f}", repeat])
    write_csv(PROOF_CSV, ["kernel", "proc", "assume", "verdict", "wall_s", "cpu_s", "runs"],
              rows, [
                  "spork-verify FILE --proc PROC [--assume ...], cold proof cache: the whole "
                  "command (start-up, loading the file, the proof for all sizes), median of "
                  "`runs`",
                  f"measured by proofs/figures.py --sporkbench on {started:%Y-%m-%d %H:%M} "
                  f"UTC, Python {platform.python_version()}",
                  f"machine: {machine_words()} (at the end)"])


def plot_sync_check(out: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    upstream, up_notes = read_csv(UPSTREAM_CSV)
    ours, our_notes = read_csv(PROOF_CSV)
    plt.rcParams.update({"font.size": 12, "figure.figsize": [9.0, 5.6], "svg.hashsalt": "spork",
                         "svg.fonttype": "none"})
    fig = plt.figure(constrained_layout=True)
    ax = fig.gca()
    xs = [int(r["n"]) for r in upstream] or list(SIZES)
    for label, (colour, marker, _, _, assume) in KERNELS.items():
        points = [(int(r["n"]), float(r["cpu_s"])) for r in upstream
                  if r["kernel"] == label and r["cpu_s"]]
        if points:
            ax.plot(*zip(*points), marker=marker, color=colour,
                    label=f"{label}: upstream sync_check, one size")
        mine = [r for r in ours if r["kernel"] == label]
        if mine:
            r = mine[0]
            scope = f" with {r['assume'].replace('=', ' = ')}" if r["assume"] else ""
            ax.hlines(float(r["cpu_s"]), min(xs), max(xs), colors=colour, linestyles="--",
                      label=f"{label}: spork-verify, all sizes{scope} ({r['verdict']})")
    ax.grid(True, which="major", alpha=0.5)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_locator(ticker.LogLocator(base=2.0, numticks=20))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, *_: f"{v:g}"))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, *_: f"{v:g}"))
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("CPU seconds (= wall on a quiet machine: one thread)")
    ax.set_title("sync_check at one size (upstream) vs one proof for all sizes (spork-verify)")
    ax.legend(fontsize=8, loc="upper left")
    when = [c.split(";")[0].split(" UTC")[0] + " UTC)" for c in up_notes + our_notes
            if c.startswith("measured")]
    ax.text(0.99, 0.01, "\n".join(when), transform=ax.transAxes, ha="right", va="bottom",
            fontsize=6, color="dimgray")
    return _save(fig, out / "sync_check_vs_proof")


def plot_files(out: Path) -> list[Path]:
    """Seconds per file, log scale: wall (wide bar) and CPU of the process tree (narrow bar;
    on a busy machine the wall time mostly says how busy), against the target."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, notes = read_csv(FILES_CSV)
    plt.rcParams.update({"font.size": 10, "svg.hashsalt": "spork", "svg.fonttype": "none"})
    fig = plt.figure(figsize=(10.0, 0.3 * len(rows) + 1.8), constrained_layout=True)
    ax = fig.gca()
    names = [f"{r['file']} ({r['procs']} procs: {r['verdicts']})" for r in rows]
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [float(r["wall_s"]) for r in rows], height=0.8, color="lightsteelblue",
            label="wall s")
    ax.barh(ys, [float(r["cpu_s"]) for r in rows], height=0.4, color="steelblue",
            label="CPU s (the process and its children)")
    ax.scatter([float(r["target_s"]) for r in rows], ys, color="darkred", marker="x",
               label="target: 2 s per proc + 1 s", zorder=3)
    ax.set_xscale("log")
    ax.set_yticks(ys, names, fontsize=7)
    ax.set_xlabel("seconds, `spork-verify FILE` from the shell, cold proof cache")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, axis="x", which="both", alpha=0.4)
    ax.set_title("\n".join(textwrap.wrap(notes[-1], 110)) if notes else "", fontsize=7,
                 loc="left")
    return _save(fig, out / "sporkbench_files")


def _save(fig, stem: Path) -> list[Path]:  # type: ignore[no-untyped-def]
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for ext, extra in (("png", {"dpi": 110, "metadata": {"Software": None}}),
                       ("svg", {"metadata": {"Date": None}})):
        path = stem.with_suffix(f".{ext}")
        fig.savefig(path, **extra)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream-python", help="measure upstream's points with this Python")
    ap.add_argument("--camspork-jit-dir", help="CAMSPORK_JIT_DIR for upstream's run")
    ap.add_argument("--sporkbench", type=Path, default=os.environ.get("SPORKBENCH"),
                    help="sporkbench checkout (main branch): measure spork-verify's proofs")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--point-budget", type=float, default=150.0,
                    help="skip an upstream size predicted to take longer (seconds)")
    ap.add_argument("--repeat", type=int, default=3, help="spork-verify runs per kernel")
    ap.add_argument("--upstream-repeat", type=int, default=1, help="timed calls per point")
    ap.add_argument("--kernels", default="",
                    help="upstream's points only for the kernels whose label contains this")
    ap.add_argument("--skip-proofs", action="store_true",
                    help="with --sporkbench: measure upstream's points only")
    ap.add_argument("--out", type=Path, default=PICTURES)
    args = ap.parse_args(argv)
    if args.upstream_python:
        if not args.sporkbench:
            raise SystemExit("--upstream-python needs --sporkbench CHECKOUT (its kernels)")
        measure_upstream(args.upstream_python, Path(args.sporkbench), args.camspork_jit_dir,
                         [int(s) for s in args.sizes.split(",")], args.point_budget,
                         args.upstream_repeat, [k for k in KERNELS if args.kernels in k])
    if args.sporkbench and not args.skip_proofs:
        measure_proofs(Path(args.sporkbench), args.repeat)
    for path in plot_sync_check(args.out) + plot_files(args.out):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
