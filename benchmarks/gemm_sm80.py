"""gemm_sm80: proof time (median of 3, cold cache) vs the concrete machine at M=N=K=128, 256,
512, and nvcc compile status of the certified CUDA. One table, measured in one run.

    python benchmarks/gemm_sm80.py [--repeat 3] [--machine-timeout 600]
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
from verifier.encode import Options, verify_proc
from verifier.encode.solver import clear_cache
from verifier.lang import ir
from verifier.lang.load import load_procs

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "gemm_sm80.py"
MACHINE = """
import sys, time
from verifier.lang.load import load_procs
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
    args = ap.parse_args()
    (proc,) = [p for p in load_procs(EXAMPLE) if isinstance(p, ir.Proc)]
    times = []
    result = None
    for _ in range(args.repeat):
        clear_cache()
        t0 = time.perf_counter()
        result = verify_proc(proc)
        times.append(time.perf_counter() - t0)
    assert result is not None
    proof = statistics.median(times)
    print(f"gemm_sm80: {result.verdict.value} for all M, N, K with M%128 = N%128 = K%32 = 0; "
          f"{len(result.obligations)} obligations")
    print(f"proof time: median {proof:.2f} s of {args.repeat} "
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
            out = subprocess.run([sys.executable, "-c", MACHINE, str(EXAMPLE), str(n)],
                                 capture_output=True, text=True, timeout=args.machine_timeout,
                                 cwd=ROOT)
            secs, errors = out.stdout.split()
            assert errors == "0", out.stdout
            print(f"{label} {float(secs):>12.1f} {float(secs) / proof:>14.1f}")
        except subprocess.TimeoutExpired:
            print(f"{label} {'> ' + str(int(args.machine_timeout)):>12} "
                  f"{'> ' + f'{args.machine_timeout / proof:.0f}':>14}")
    nvcc = shutil.which("nvcc")
    if result.certificate is None or nvcc is None:
        print("nvcc: skipped (no certificate or no nvcc)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / "gemm_sm80.cu"
        cu.write_text(emit_cuda(proc, result.certificate))
        for arch in ("sm_80", "sm_90a"):
            r = subprocess.run([nvcc, "-std=c++17", f"-arch={arch}", "-c", str(cu), "-o",
                                str(Path(tmp) / f"{arch}.o")], capture_output=True, text=True)
            status = "ok" if r.returncode == 0 else f"FAILED\n{r.stderr[-2000:]}"
            print(f"nvcc -arch={arch}: {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
