"""Issues 19/20 ("verification time linear in the number of statements"): generated kernels of
250 to 10,000 statements in several shapes, each loaded and verified in a fresh interpreter
(no proof cache, one job), with wall and CPU seconds, obligations and the time per statement;
then the 3,000-phase fenced ping-pong kernel, and a large one with one fence removed (refuted,
replayed).

    python benchmarks/scaling.py [--sizes 250,1000,3000,10000] [--shapes ping_pong,one_element]
                                 [--phases 3000] [--cut 1000]

Statements are the lines of the generated proc body but its assert: every line is one
statement (the device function, allocations, loops, assignments, fences). Shapes:

* ping_pong: benchmarks/mutants.py's fenced kernel (a 256-element SMEM tile passed between two
  buffers, a CTA fence after every phase, three statements per phase);
* one_element: n statements writing one element per thread (`a[t] = k`) in one thread loop;
* read_modify_write: n statements `a[t] = a[t] + 1.0` in one thread loop;
* nest: ping-pong phases in pairs inside `seq` loops (loop-carried pairs and fences).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness import child_json, load_average  # noqa: E402
from mutants import ping_pong as _ping_pong  # noqa: E402

_HEAD = ["from verifier.lang import *", "", "", "@proc"]


def _kernel(name: str, body: list[str]) -> str:
    return "\n".join(_HEAD + [
        f"def {name}(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):",
        "    assert n % 256 == 0",
        "    with CudaDeviceFunction(blockDim=256):",
        "        for blk in cuda_tasks(0, n / 256):",
        "            a: f32[256] @ CudaSmemLinear"] + body + [
        "            Fence(cuda_in_order, cuda_in_order)", ""])


def ping_pong(statements: int, drop_fence: int | None = None) -> str:
    """About `statements` statements of benchmarks/mutants.py's ping-pong kernel."""
    return _ping_pong(max(1, (statements - 10) // 3), drop_fence)


def one_element(statements: int) -> str:
    """Every statement of one thread loop writes the thread's element of `a`."""
    writes = [f"                a[t] = {k}.0" for k in range(max(1, statements - 8))]
    return _kernel("one_element", [
        "            for t in cuda_threads(0, 256):",
        "                a[t] = x[256 * blk + t]", *writes,
        "                y[256 * blk + t] = a[t]"])


def read_modify_write(statements: int) -> str:
    """Every statement of one thread loop reads and writes the thread's element of `a`."""
    steps = ["                a[t] = a[t] + 1.0"] * max(1, statements - 8)
    return _kernel("read_modify_write", [
        "            for t in cuda_threads(0, 256):",
        "                a[t] = x[256 * blk + t]", *steps,
        "                y[256 * blk + t] = a[t]"])


def nest(statements: int) -> str:
    """Pairs of ping-pong phases inside `seq` loops: b from a, a from b, fenced."""
    body = ["            b: f32[256] @ CudaSmemLinear",
            "            for t in cuda_threads(0, 256):",
            "                a[t] = x[256 * blk + t]",
            "            Fence(cuda_in_order, cuda_in_order)"]
    for _ in range(max(1, (statements - 13) // 7)):
        body += ["            for k in seq(0, 2):",
                 "                for t in cuda_threads(0, 256):",
                 "                    b[t] = a[255 - t] + 1.0",
                 "                Fence(cuda_in_order, cuda_in_order)",
                 "                for t in cuda_threads(0, 256):",
                 "                    a[t] = b[255 - t] + 1.0",
                 "                Fence(cuda_in_order, cuda_in_order)"]
    body += ["            for t in cuda_threads(0, 256):",
             "                y[256 * blk + t] = a[t]"]
    return _kernel("nest", body)


KERNELS: dict[str, Callable[[int], str]] = {
    "ping_pong": ping_pong, "one_element": one_element,
    "read_modify_write": read_modify_write, "nest": nest}


def statements(text: str) -> int:
    """Lines of the proc body but the assert (one statement each in these kernels)."""
    body = text.split("):\n", 1)[1].splitlines()
    return sum(1 for line in body if line.strip() and not line.strip().startswith("assert"))


def measure(path: Path) -> dict[str, object]:
    """Load and verify the kernel's proc here (no proof cache, one job): wall and CPU
    seconds of this process for both, verdict, obligations, those a solver decided, and the
    findings. Run in a fresh interpreter per kernel (`row`), so no cache of an earlier one
    helps."""
    from verifier.encode import Options, verify_proc
    from verifier.lang.ir import ir
    from verifier.load.load import load_procs

    t0, c0 = time.perf_counter(), time.process_time()
    (proc,) = [p for p in load_procs(path) if isinstance(p, ir.Proc)]
    loaded = time.perf_counter() - t0
    result = verify_proc(proc, Options(jobs=1))
    findings = [(f.kind.value, f.variable, f.loc.line,
                 f.counterexample is not None and f.counterexample.replayed)
                for f in result.findings]
    return {"verdict": result.verdict.value, "wall": time.perf_counter() - t0,
            "cpu": time.process_time() - c0, "load": loaded,
            "obligations": len(result.obligations),
            "solved": sum(1 for o in result.obligations if not o.discharged_by),
            "findings": findings}


def row(label: str, text: str, tmp: Path) -> dict[str, object]:
    """One kernel measured in a fresh interpreter; `process` is that child's whole CPU time
    (interpreter start and imports included)."""
    path = tmp / "kernel.py"
    path.write_text(text)
    n = statements(text)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = child_json([sys.executable, str(Path(__file__).resolve()), "--measure", str(path)])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{label:<22} {n:>6} {r['verdict']:>8} {r['wall']:>8.2f} {r['cpu']:>8.2f} "
          f"{process:>8.2f} {r['obligations']:>6} {r['solved']:>6} "
          f"{1000 * r['wall'] / n:>7.2f} {1000 * r['cpu'] / n:>7.2f} "
          f"{os.getloadavg()[0]:>6.2f}", flush=True)
    return r


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="250,1000,3000,10000")
    ap.add_argument("--shapes", default=",".join(KERNELS))
    ap.add_argument("--phases", type=int, default=3000, help="the fenced ping-pong kernel")
    ap.add_argument("--cut", type=int, default=1000,
                    help="phases of the ping-pong kernel with its middle fence removed")
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the child's part
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    print(f"scaling: {os.cpu_count()} CPUs, load {load_average()}. wall s, cpu s: loading and "
          f"verifying the proc (no proof cache, one job) in a fresh interpreter; process s: "
          f"that interpreter's whole CPU time, its start and imports included")
    print(f"{'kernel':<22} {'stmts':>6} {'verdict':>8} {'wall s':>8} {'cpu s':>8} "
          f"{'process':>8} {'obls':>6} {'solved':>6} {'ms/stmt':>7} {'cpu ms':>7} "
          f"{'load1':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            for size in (int(s) for s in args.sizes.split(",")):
                row(shape, KERNELS[shape](size), Path(tmp))
        if args.phases:
            row(f"ping_pong P={args.phases}", _ping_pong(args.phases), Path(tmp))
        if args.cut:
            cut = args.cut // 2
            r = row(f"P={args.cut}, fence {cut} cut", _ping_pong(args.cut, cut), Path(tmp))
            print("findings (kind, variable, line, replayed): "
                  + "; ".join(str(f) for f in r["findings"]))
    print(f"load at end {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
