"""Upstream's Sm90a GEMM test app: the kernel of every case tests/cuda/test_Sm90a_gemm.py builds,
our verdict and cold proof time (issue 9: <= 2 s each, median of 3, flat in the sizes).

Usage: python3 benchmarks/upstream_sm90a_app.py UPSTREAM_PYTHON [--repeat N]

UPSTREAM_PYTHON is an interpreter with upstream Exo-GPU (branch akeley98/camspork_jit)
installed. Each case is a three-line script calling upstream's gemm_Sm90a_test package
(make_Sm90a_gemm, or schedule_Sm90a_gemm for the scheduled case) with the test's config and
cluster shape; it is loaded as `spork-verify --exo-gpu-python UPSTREAM_PYTHON` loads it (that
package is not served by spork-verify, so the script runs in upstream's interpreter and the
printed kernel is parsed, SCHED-1..3), once. Each repeat then proves the kernel in a fresh
interpreter (sporkbench_sm90.ours: --no-cache, --jobs 1), for all sizes and, where that is
refuted (the rmemC-style configs without split-K race on C when K_split >= 2), again with
K_split = 1 assumed (specs/cli.md CLI-11). The test wraps each kernel in a CPU proc with host
copies (CALL-1 inlines it); the kernel is what is proved here. Columns: median wall s, median
CPU s, Z3 units (deterministic), first finding; the machine's load before and after (shared,
noisy machine).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from harness import ROOT, load_average
from sporkbench_sm90 import ours

sys.path.insert(0, str(ROOT))

from verifier.load.load_protocol import LoadReply, Stage, write_reply  # noqa: E402
from verifier.load.load_scheduled import load_file  # noqa: E402

# test_Sm90a_gemm.py's configs (tile sizes and epilogue) and cases (config, cluster, scheduled)
CONFIGS = {
    "A": "smem_M=128, smem_N=256, tma_to_gmem=False, enable_split_k=False",
    "B": "smem_M=256, smem_N=192, tma_to_gmem=False, enable_split_k=False",
    "K": "smem_M=256, smem_N=192, tma_to_gmem=True, enable_split_k=True",
}
CASES = [("A", 1, 1, False), ("B", 1, 1, False), ("K", 1, 1, False), ("A", 2, 1, False),
         ("B", 1, 2, False), ("K", 2, 2, False), ("B", 1, 2, True)]

SCRIPT = """\
from exo.platforms.gemm_Sm90a_test.{module} import {builder}
from exo.platforms.gemm_Sm90a_test.Sm90a_gemm_pre_config import Sm90aGemmConfig
gemm = {builder}(Sm90aGemmConfig({config}), {ncta_m}, {ncta_n})
"""


def case_name(config: str, ncta_m: int, ncta_n: int, scheduled: bool) -> str:
    return f"{'sch_' if scheduled else ''}gemm_m{ncta_m}n{ncta_n}_{config}"


def load_case(tmp: Path, python: str, config: str, ncta_m: int, ncta_n: int,
              scheduled: bool) -> tuple[Path, str]:
    """A file of the loaded kernel for fresh interpreters, and the kernel's name."""
    name = case_name(config, ncta_m, ncta_n, scheduled)
    script = tmp / f"{name}.py"
    script.write_text(SCRIPT.format(
        module="schedule_Sm90a_gemm" if scheduled else "make_Sm90a_gemm",
        builder="schedule_Sm90a_gemm" if scheduled else "make_Sm90a_gemm",
        config=CONFIGS[config], ncta_m=ncta_m, ncta_n=ncta_n))
    loaded = load_file(str(script), 300.0, python)
    if loaded.error is not None:
        raise SystemExit(f"{name}: {loaded.error.render()}")
    (kernel,) = loaded.procs
    procs_file = tmp / f"{name}.bin"
    fd = os.open(procs_file, os.O_RDWR | os.O_CREAT, 0o600)
    write_reply(fd, LoadReply(Stage.done, [kernel]))
    os.close(fd)
    return procs_file, kernel.name


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("upstream_python")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"load average before: {load_average()}")
    print(f"{'case':22} {'sizes':10} {'verdict':9} {'ours s':>7} {'cpu s':>6} {'units':>11}  "
          "finding")
    with tempfile.TemporaryDirectory() as tmp:
        # upstream's package compiles its sync checker on import and wants a scratch folder
        os.environ.setdefault("CAMSPORK_JIT_DIR", str(Path(tmp) / "jit"))
        for config, ncta_m, ncta_n, scheduled in CASES:
            procs_file, kernel = load_case(Path(tmp), args.upstream_python, config, ncta_m,
                                           ncta_n, scheduled)
            for scope, fixed in (("all sizes", None), ("K_split=1", {"K_split": 1})):
                verdict, secs, cpu, units, why = ours(procs_file, kernel, args.repeat, fixed)
                print(f"{case_name(config, ncta_m, ncta_n, scheduled):22} {scope:10} "
                      f"{verdict:9} {secs:7.2f} {cpu:6.2f} {units:11,}  {why}", flush=True)
                if verdict == "proved":
                    break
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
