"""Which of upstream endgame's ThunderKittens wgmma GEMMs that spork-verify proves emit CUDA that
nvcc builds (issue 18 item 6; specs/codegen.md TK-CG-*).

    python benchmarks/tk_gemm_codegen.py UPSTREAM_PYTHON [--thunderkittens INCLUDE] [--out DIR]

Builds, under upstream Exo-GPU (UPSTREAM_PYTHON, endgame; `--exo-gpu-python`, SCHED-2), the
positive GEMMs of upstream's tests/cuda/test_Sm90a_gemm.py and test_sync_error_Sm90a_gemm.py
with `tk_gemm_util.handwrite_gemm` and the tests' own configurations (one upstream run for
all), verifies each (split-K kernels for all sizes; the others with `--assume K_split=1`, the
size upstream's tests run them at, CLI-11), emits CUDA for the proved ones and compiles each
for sm_90a with ThunderKittens' headers (`--thunderkittens`, else $THUNDERKITTENS_INCLUDE;
without them the build column says so). One row per proc: verdict, proof CPU s, emission
(or the first construct refused, with its code), nvcc result. `--out` keeps the printed procs
and the .cu files. The ping-pong positive stops at `.ring_guarded_by` (DIAL-9) and is not built.
"""

from __future__ import annotations

import argparse
import linecache
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verifier.codegen import emit_cuda  # noqa: E402
from verifier.codegen.targets import NVCC_FLAGS, TK_FLAGS  # noqa: E402
from verifier.diagnostics import SporkError  # noqa: E402
from verifier.encode import Options, verify_proc  # noqa: E402
from verifier.load.load_isolated import load_isolated  # noqa: E402
from verifier.load.load_protocol import PrintedProc  # noqa: E402
from verifier.load.load_scheduled import load_by_exo_gpu  # noqa: E402
from verifier.results import Verdict  # noqa: E402

# (name, the test it comes from, the GemmConfig expression, whether split-K)
GEMMS = (
    ("split_k_positive", "test_sync_error_Sm90a_gemm.py::test_split_k_positive",
     "replace(base, enable_split_k=True)", True),
    ("coop_positive", "test_sync_error_Sm90a_gemm.py::test_coop_positive", "base", False),
    ("m1n1_A", "test_Sm90a_gemm.py::test_golden_Sm90a_gemm_m1n1_A",
     "replace(f32_A, ncta_M=1, ncta_N=1)", False),
    ("m1n1_B", "test_Sm90a_gemm.py::test_golden_Sm90a_gemm_m1n1_B",
     "replace(f32_B, ncta_M=1, ncta_N=1)", False),
    ("m1n1_K", "test_Sm90a_gemm.py::test_golden_Sm90a_gemm_m1n1_K",
     "replace(f32_K, ncta_M=1, ncta_N=1)", True),
    ("m2n1_A", "test_Sm90a_gemm.py::test_golden_Sm90a_gemm_m2n1_A",
     "replace(f32_A, ncta_M=2, ncta_N=1)", False),
    ("m1n2_B", "test_Sm90a_gemm.py::test_golden_Sm90a_gemm_m1n2_B",
     "replace(f32_B, ncta_M=1, ncta_N=2)", False),
    ("m2n2_K", "test_Sm90a_gemm.py::test_golden_Sm90a_gemm_m2n2_K",
     "replace(f32_K, ncta_M=2, ncta_N=2)", True),
)

SCRIPT = '''from dataclasses import replace
from exo import *
from exo.platforms.Sm90.tk_gemm_util import handwrite_gemm, GemmConfig

# the configurations of upstream's tests/cuda/test_sync_error_Sm90a_gemm.py and test_Sm90a_gemm.py
base = GemmConfig(ncta_M=2, A_major="row", B_major="col", C_major="row")
f32 = GemmConfig(A_type="f32", A_major="row", B_type="f32", B_major="col", C_type="f32",
                 C_major="row")
f32_A = replace(f32, cta_M=128, cta_N=256, enable_split_k=False)
f32_B = replace(f32, cta_M=256, cta_N=192, enable_split_k=False)
f32_K = replace(f32, cta_M=256, cta_N=192, enable_split_k=True)


def gemms():
    return [{calls}]
'''


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _nvcc(cu: Path, include: str) -> str:
    nvcc = shutil.which("nvcc")
    if nvcc is None or not Path(include, "kittens.cuh").is_file():
        return "not built (nvcc or ThunderKittens' headers missing)"
    flags = [f if f != "THUNDERKITTENS/include" else include for f in TK_FLAGS]
    run = subprocess.run([nvcc, *flags, *NVCC_FLAGS["sm_90a"], "-c", str(cu), "-o",
                          str(cu.with_suffix(".o"))], capture_output=True, text=True,
                         timeout=1800)
    if run.returncode:
        return "nvcc FAILED: " + run.stderr.strip().splitlines()[-1][:200]
    return "nvcc ok (warnings)" if "warning" in run.stderr else "nvcc ok"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("upstream_python")
    ap.add_argument("--thunderkittens", default=os.environ.get("THUNDERKITTENS_INCLUDE", ""))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", nargs="*", help="names of GEMMS rows to build (default: all)")
    ap.add_argument("--printed", action="store_true",
                    help="parse the procs printed by an earlier run into --out again instead of "
                         "running upstream (the text is the program either way, SCHED-3)")
    args = ap.parse_args()
    rows = [g for g in GEMMS if not args.only or g[0] in args.only]
    out = args.out or Path(tempfile.mkdtemp(prefix="tk_gemm_codegen"))
    out.mkdir(parents=True, exist_ok=True)
    script = out / "tk_gemms.py"
    script.write_text(SCRIPT.format(calls=", ".join(f"handwrite_gemm({c})" for _, _, c, _ in rows)))
    start, cpu0 = time.monotonic(), _cpu()
    if args.printed:
        texts = []
        for row_name, *_ in rows:
            text = (out / f"{row_name}.printed.py").read_text()
            name = re.search(r"^def (\w+)\(", text, re.M)[1]  # upstream's name of the proc
            texts.append(PrintedProc(name, text, f"{script}@exo-gpu/{name}.py", True))
        loaded = load_isolated(script, 600.0, tuple(texts))
    else:
        loaded = load_by_exo_gpu(str(script), args.upstream_python, 3600.0, "gemms()")
    if loaded.error is not None:
        print(f"upstream build failed: {loaded.error.render()}")
        return 1
    print(f"# {'parsed' if args.printed else 'built under upstream'} {len(loaded.procs)} procs "
          f"in {time.monotonic() - start:.0f} s wall, {_cpu() - cpu0:.0f} s CPU")
    emitted = 0
    for (name, test, _, split), proc in zip(rows, loaded.procs):
        if not args.printed:
            text = "".join(linecache.getlines(proc.loc.file))
            (out / f"{name}.printed.py").write_text(text)
        cpu = _cpu()
        result = verify_proc(proc, Options(releases=True,
                                           fixed_sizes=None if split else {"K_split": 1}))
        proof = _cpu() - cpu
        verdict = result.verdict.value + ("" if split else " (K_split=1)")
        if result.verdict is not Verdict.proved:
            print(f"{name:18} {test}: {verdict}, {proof:.1f} s CPU; no CUDA")
            continue
        try:
            text = emit_cuda(proc, result.certificate)
        except SporkError as e:
            print(f"{name:18} {test}: {verdict}, {proof:.1f} s CPU; no CUDA: [{e.code}] "
                  f"{e.message[:160]}")
            continue
        cu = out / f"{name}.cu"
        cu.write_text(text)
        built = _nvcc(cu, args.thunderkittens)
        emitted += built == "nvcc ok"
        print(f"{name:18} {test}: {verdict}, {proof:.1f} s CPU; CUDA emitted; {built}")
    print(f"# {emitted} of {len(rows)} emit CUDA that nvcc builds for sm_90a; "
          f"{time.monotonic() - start:.0f} s wall, {_cpu() - cpu0:.0f} s CPU in all; "
          f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
