"""The Sm80 GEMMs (gemm_sm80: cp.async + commit groups; gemm_sm80_ws: warp-specialized with
an mbarrier ring): proof time for all sizes (median of N, cold cache), proof time at fixed
sizes, the concrete machine at M=N=K=128, 256, 512, and nvcc compile status of the certified
CUDA. One table per kernel, measured in one run.

    python benchmarks/gemm_sm80.py [--repeat 3] [--machine-timeout 600] [--only NAME]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verifier.codegen import emit_cuda
from verifier.codegen.targets import NVCC_FLAGS
from verifier.encode import Options, verify_proc
from verifier.encode.discharge import clear_cache
from verifier.lang.ir import ir
from verifier.load.load import load_procs

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = (ROOT / "examples" / "gemm_sm80.py", ROOT / "examples" / "gemm_sm80_ws.py")
MACHINE = """
import sys, time
from verifier.load.load import load_procs
from verifier.semantics import run_machine
(p,) = load_procs(sys.argv[1])
n = int(sys.argv[2])
t0 = time.perf_counter()
holds, findings = run_machine(p, {"M": n, "N": n, "K": n})
print(time.perf_counter() - t0, len(findings))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--machine-timeout", type=float, default=600.0)
    ap.add_argument("--only", default=None, help="one example name, e.g. gemm_sm80_ws")
    args = ap.parse_args()
    for example in EXAMPLES:
        if args.only is None or example.stem == args.only:
            bench(example, args.repeat, args.machine_timeout)
    return 0


def bench(example: Path, repeat: int, machine_timeout: float) -> None:
    (proc,) = [p for p in load_procs(example) if isinstance(p, ir.Proc)]
    times = []
    result = None
    for _ in range(repeat):
        clear_cache()
        t0 = time.perf_counter()
        result = verify_proc(proc)
        times.append(time.perf_counter() - t0)
    assert result is not None
    proof = statistics.median(times)
    print(f"\n{proc.name}: {result.verdict.value} for all M, N, K satisfying its asserts; "
          f"{len(result.obligations)} obligations")
    print(f"proof time: median {proof:.2f} s of {repeat} "
          f"({', '.join(f'{t:.2f}' for t in times)})")
    print(f"{'M=N=K':>6} {'proof at this size s':>21} {'machine s':>12} {'machine/proof':>14}")
    for n in (128, 256, 512):
        clear_cache()
        t0 = time.perf_counter()
        fixed = verify_proc(proc, Options(fixed_sizes={"M": n, "N": n, "K": n}))
        at_size = time.perf_counter() - t0
        assert fixed.verdict.value == "proved", fixed.verdict
        label = f"{n:>6} {at_size:>21.2f}"
        try:
            out = subprocess.run([sys.executable, "-c", MACHINE, str(example), str(n)],
                                 capture_output=True, text=True, timeout=machine_timeout,
                                 cwd=ROOT)
            secs, errors = out.stdout.split()
            assert errors == "0", out.stdout
            print(f"{label} {float(secs):>12.1f} {float(secs) / proof:>14.1f}")
        except subprocess.TimeoutExpired:
            print(f"{label} {'> ' + str(int(machine_timeout)):>12} "
                  f"{'> ' + f'{machine_timeout / proof:.0f}':>14}")
    nvcc = shutil.which("nvcc")
    if result.certificate is None or nvcc is None:
        print("nvcc: skipped (no certificate or no nvcc)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / f"{example.stem}.cu"
        cu.write_text(emit_cuda(proc, result.certificate))
        for arch in ("sm_80", "sm_90a"):
            flags = list(NVCC_FLAGS[arch])
            r = subprocess.run([nvcc, "-std=c++17", *flags, "-c", str(cu), "-o",
                                str(Path(tmp) / f"{arch}.o")], capture_output=True, text=True)
            status = "ok" if r.returncode == 0 else f"FAILED\n{r.stderr[-2000:]}"
            print(f"nvcc {' '.join(flags)}: {status}")


if __name__ == "__main__":
    sys.exit(main())
