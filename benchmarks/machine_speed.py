"""The concrete abstract machine where it must run whole (issues 11 and 20: `--sizes` runs and
in-file `sync_check` calls), ours against upstream's C++ checker (camspork, `Procedure.sync_check`)
on the same kernels and sizes.

    python benchmarks/machine_speed.py --sporkbench SPORKBENCH [--sizes 256,512,1024]
                                       [--repeat 3] [--upstream-python PYTHON]
                                       [--kernels sm80_mbarrier,sm90a_splitk,f16_naive]
    python benchmarks/machine_speed.py --gemm-sm80 [--sizes 128,256] ...   (issue 11's table)
    python benchmarks/machine_speed.py --replays                           (seeded GEMM bugs)

Kernels (`--sporkbench`): sporkbench's Sm80 mbarrier split-K GEMM, its Sm90a split-K GEMM (1x1
cluster) and its f16 naive GEMM, at M = N = K = n (split-K: K_splits = 2, K_cta = n / 2 for Sm80;
K_split = 4, cluster_K = n / 4 for Sm90a, as sporkbench's benchmark_sync_check.py). Loading is
counted apart. Our side loads each file once (isolated and unchanged, in a scratch copy: the
file's own `sync_check` calls run then) and each timed run is a fresh interpreter that reads the
proc back and runs the machine once (`run_machine`: what `--sizes` and `p.sync_check(...)` run):
the cold figure. The warm figure times our runs as upstream's are timed: all in one interpreter,
after one untimed run at the smallest size (as upstream's follow its file's own calls).
Upstream's side (`--upstream-python`, an interpreter whose `exo` has the camspork checker;
CAMSPORK_JIT_DIR from the environment, else a scratch folder) runs the file once as a script
(load, JIT build and the file's own `sync_check` calls, timed apart), then `sync_check`s the
proc `--repeat` times per size in that process.

gemm_sm80 (`--gemm-sm80`): examples/gemm_sm80.py at M = N = K = n, upstream running the file
unchanged except for its import line, one warm-up `sync_check` not timed. Replays (`--replays`):
each seeded GEMM bug's whole verification and, apart, a collect-all replay at the
counterexample's sizes, whole and targeted at the error's variable (Choice M8).

Tables give medians of wall and CPU (process) seconds and the CPU ratio ours / upstream (below
1.0: ours is faster), with the load average per row: the machine is shared and noisy, and CPU
time is the fair comparison when the load is high.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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


@dataclass(frozen=True)
class Kernel:
    """One sporkbench kernel: its file (relative to the checkout), the proc and its sizes."""

    key: str
    path: str
    proc: str
    sizes: Callable[[int], dict[str, int]]


KERNELS = (
    Kernel("sm80_mbarrier", "examples/Sm80_gemm/exocc_Sm80_m128n256k16_m64n64_splitK.py",
           "xgemm_Sm80_m256n128k16_m64n64_mbarrier_splitK",
           lambda n: {"L": 1, "M": n, "N": n, "K_splits": 2, "K_cta": n // 2}),
    Kernel("sm90a_splitk", "examples/Sm90a_gemm/exocc_Sm90a_m128n256_splitK.py",
           "xgemm_Sm90a_r4_m1n1_m128n256_splitK",
           lambda n: {"L": 1, "M": n, "N": n, "K_split": 4, "cluster_K": n // 4}),
    Kernel("f16_naive", "examples/f16_experiment/exocc_Sm80_naive_gemm.py",
           "naive_gemm_f32_f16_f16", lambda n: {"M": n, "N": n, "K": n}),
)

RUN_LOADED = """
import json, os, sys, time
from verifier.load.load_protocol import read_reply
from verifier.semantics import run_machine
proc = next(p for p in read_reply(os.open(sys.argv[1], os.O_RDONLY)).procs
            if p.name == sys.argv[2])
w0, c0 = time.perf_counter(), time.process_time()
holds, findings = run_machine(proc, json.loads(sys.argv[3]))
print(json.dumps([time.perf_counter() - w0, time.process_time() - c0, holds,
                  [f.kind for f in findings]]))
"""

RUN_WARM = """
import json, os, sys, time
from verifier.load.load_protocol import read_reply
from verifier.semantics import run_machine
proc = next(p for p in read_reply(os.open(sys.argv[1], os.O_RDONLY)).procs
            if p.name == sys.argv[2])
c0 = time.process_time()
run_machine(proc, json.loads(sys.argv[3]))  # the warm-up, as upstream's load runs the file's own calls
warm_up = time.process_time() - c0
out = []
for sizes in json.loads(sys.argv[4]):
    w0, c0 = time.perf_counter(), time.process_time()
    holds, findings = run_machine(proc, sizes)
    assert holds and not findings, findings
    out.append([time.perf_counter() - w0, time.process_time() - c0])
print(json.dumps([warm_up, out]))
"""

UPSTREAM_RUN = """
import json, os, runpy, sys, time
path, want, runs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path.insert(0, os.path.dirname(path))
import exo
c0 = time.process_time()
scope = runpy.run_path(path, run_name="__main__")
load = time.process_time() - c0
proc = next(v for v in scope.values() if isinstance(v, exo.Procedure) and v.name() == want)
out = []
for sizes in runs:
    w0, c0 = time.perf_counter(), time.process_time()
    proc.sync_check(**sizes)
    out.append([time.perf_counter() - w0, time.process_time() - c0])
print(json.dumps([load, out]))
"""


def children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def scratch_copy(checkout: Path, kernel: Kernel, side: Path) -> Path:
    """The kernel's file in a scratch copy of its folder (sporkbench files write beside them)."""
    src = checkout / kernel.path
    folder = side / kernel.key / src.parent.name
    shutil.copytree(src.parent, folder)
    return folder / src.name


def load_ours(checkout: Path, kernel: Kernel, tmp: Path) -> tuple[Path, float]:
    """A procs file holding the kernel's proc, loaded once; and the CPU seconds loading took."""
    from verifier.load.load_isolated import load_isolated
    from verifier.load.load_protocol import LoadReply, Stage, write_reply

    path = scratch_copy(checkout, kernel, tmp / "ours")
    c0 = children_cpu()
    loaded = load_isolated(path)
    cpu = children_cpu() - c0
    if loaded.error is not None:
        raise SystemExit(f"{kernel.path}: {loaded.error}")
    procs_file = path.parent.parent / "procs.bin"
    fd = os.open(procs_file, os.O_RDWR | os.O_CREAT, 0o600)
    write_reply(fd, LoadReply(Stage.done, tuple(p for p in loaded.procs
                                                if p.name == kernel.proc)))
    os.close(fd)
    return procs_file, cpu


def ours_run(procs_file: Path, kernel: Kernel, n: int) -> tuple[float, float]:
    wall, cpu, holds, kinds = child_json(
        [sys.executable, "-c", RUN_LOADED, str(procs_file), kernel.proc,
         json.dumps(kernel.sizes(n))], {**os.environ, "PYTHONPATH": str(ROOT)})
    assert holds and not kinds, f"{kernel.proc} at {n}: the machine reports {kinds}"
    return wall, cpu


def ours_warm_runs(procs_file: Path, kernel: Kernel, sizes: list[int], repeat: int
                   ) -> tuple[float, dict[int, list[tuple[float, float]]]]:
    """Ours timed as upstream is: every run in one interpreter, after one untimed run at the
    smallest size (upstream's timed calls follow its file's own sync_check calls in its
    process); (warm-up CPU s, per size the (wall, CPU) of each repeat)."""
    runs = [kernel.sizes(n) for n in sizes for _ in range(repeat)]
    warm_up, out = child_json([sys.executable, "-c", RUN_WARM, str(procs_file), kernel.proc,
                               json.dumps(kernel.sizes(min(sizes))), json.dumps(runs)],
                              {**os.environ, "PYTHONPATH": str(ROOT)})
    return warm_up, {n: [tuple(x) for x in out[k * repeat:(k + 1) * repeat]]
                     for k, n in enumerate(sizes)}


def upstream_runs(python: str, checkout: Path, kernel: Kernel, sizes: list[int], repeat: int,
                  tmp: Path) -> tuple[float, dict[int, list[tuple[float, float]]]]:
    """(load CPU s, per size the (wall, CPU) of each repeat), all in one upstream process."""
    path = scratch_copy(checkout, kernel, tmp / "upstream")
    runs = [kernel.sizes(n) for n in sizes for _ in range(repeat)]
    env = {**os.environ, "CAMSPORK_JIT_DIR": os.environ.get("CAMSPORK_JIT_DIR",
                                                            str(tmp / "jit"))}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([python, "-c", UPSTREAM_RUN, str(path), kernel.proc, json.dumps(runs)],
                       capture_output=True, text=True, env=env, cwd=path.parent, check=False)
    if r.returncode != 0:
        raise SystemExit(f"upstream {kernel.key}: "
                         f"{(r.stderr.strip().splitlines() or ['failed'])[-1]}")
    load, out = json.loads(r.stdout.strip().splitlines()[-1])
    return load, {n: [tuple(x) for x in out[k * repeat:(k + 1) * repeat]]
                  for k, n in enumerate(sizes)}


def kernels_table(args: argparse.Namespace) -> None:
    sizes = [int(x) for x in args.sizes.split(",")]
    chosen = [k for k in KERNELS if k.key in args.kernels.split(",")]
    print(f"sporkbench kernels at M = N = K = n: the concrete machine, median of {args.repeat} "
          "(ratio: ours / upstream CPU, below 1.0 is faster); load average (1, 5, 15 min) per "
          "row; loading counted apart")
    print("ours: each run a fresh interpreter (cold); ours warm: the runs in one interpreter "
          "after a warm-up run, as upstream's runs are timed in one process after its file's own "
          "sync_check calls")
    print(f"{'kernel':14} {'n':>5} {'ours wall s':>11} {'ours CPU s':>10} {'up wall s':>10} "
          f"{'up CPU s':>9} {'CPU ratio':>9} {'warm CPU s':>10} {'warm ratio':>10}  load")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for kernel in chosen:
            procs_file, our_load = load_ours(args.sporkbench, kernel, tmp)
            up_load, up = (upstream_runs(args.upstream_python, args.sporkbench, kernel, sizes,
                                         args.repeat, tmp)
                           if args.upstream_python else (None, {}))
            _, warm = ours_warm_runs(procs_file, kernel, sizes, args.repeat)
            for n in sizes:
                ow, oc = median_pair([ours_run(procs_file, kernel, n)
                                      for _ in range(args.repeat)])
                wc = median_pair(warm[n])[1]
                cols = f"{'-':>10} {'-':>9} {'-':>9} {wc:10.3f} {'-':>10}"
                if n in up:
                    uw, uc = median_pair(up[n])
                    cols = f"{uw:10.2f} {uc:9.3f} {oc / uc:9.2f} {wc:10.3f} {wc / uc:10.2f}"
                print(f"{kernel.key:14} {n:5} {ow:11.2f} {oc:10.3f} {cols}  {load_average()}",
                      flush=True)
            up_text = f"{up_load:.1f}" if up_load is not None else "not measured"
            print(f"{kernel.key:14} load CPU s: ours {our_load:.1f} (the file's own sync_check "
                  f"calls included), upstream {up_text} (JIT build and the file's own "
                  "sync_check calls included)", flush=True)


def replays_table() -> None:
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


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sporkbench", type=Path, default=None,
                    help="a sporkbench checkout: time its three kernels (issue 20)")
    ap.add_argument("--kernels", default=",".join(k.key for k in KERNELS))
    ap.add_argument("--gemm-sm80", action="store_true", help="issue 11's gemm_sm80 table")
    ap.add_argument("--replays", action="store_true", help="the seeded GEMM bugs' replays")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default=None, help="default 256,512,1024 (gemm_sm80: 128,256)")
    ap.add_argument("--upstream-python", default=None)
    args = ap.parse_args(argv)
    if args.sporkbench is not None:
        args.sizes = args.sizes or "256,512,1024"
        kernels_table(args)
    if args.gemm_sm80:
        args.sizes = args.sizes or "128,256"
        sizes_table(args)
    if args.replays:
        replays_table()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
