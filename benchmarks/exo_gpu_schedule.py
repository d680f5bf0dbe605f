"""Procs built by upstream Exo-GPU's own rewrites (SCHED-*): load and proof time, verdict.

Usage: python3 benchmarks/exo_gpu_schedule.py UPSTREAM_PYTHON [--sm90a-gemm] [--runs N]

Rows: `examples/exo_gpu/scale_scheduled.py` (our own small script) and, with --sm90a-gemm
(UPSTREAM_PYTHON's exo installed from a checkout of akeley98/camspork_jit), upstream's
scheduled Sm90a GEMM (tests/cuda/test_Sm90a_gemm.py's config_B on a 1x2 cluster, built by
upstream's gemm_Sm90a_test/schedule_Sm90a_gemm.py: ~60 rewrites) from a script that
only calls that schedule. Each run loads the file as the CLI does (`load_file`: our loader,
which stops at the first rewrite, then upstream's run and the parse of what it prints) and
proves every proc; medians of N runs, CPU seconds of this process next to wall time, and the
machine's load (a shared, noisy machine).
"""

from __future__ import annotations

import argparse
import linecache
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import ROOT, load_average

sys.path.insert(0, str(ROOT))

from verifier.encode import Options, verify_proc  # noqa: E402
from verifier.load.load_protocol import PrintedProc  # noqa: E402
from verifier.load.load_scheduled import load_file  # noqa: E402
from verifier.load.printed import parse_printed  # noqa: E402

GEMM_SCRIPT = """\
from exo.platforms.gemm_Sm90a_test.schedule_Sm90a_gemm import schedule_Sm90a_gemm
from exo.platforms.gemm_Sm90a_test.Sm90a_gemm_pre_config import Sm90aGemmConfig

config_B = Sm90aGemmConfig(smem_M=256, smem_N=192, tma_to_gmem=False, enable_split_k=False)
gemm = schedule_Sm90a_gemm(config_B, 1, 2)
"""


GEMM = "upstream scheduled Sm90a GEMM m1n2_B"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(path: Path, python: str) -> dict[str, object]:
    cpu0, wall0 = _children_cpu(), time.monotonic()
    loaded = load_file(str(path), 300.0, python)
    load_s, load_cpu = time.monotonic() - wall0, _children_cpu() - cpu0
    if loaded.error is not None:
        return {"load_s": load_s, "load_cpu": load_cpu, "verdict": loaded.error.render()[:80]}
    start, cpu = time.monotonic(), time.process_time()
    results = [verify_proc(p, Options(timeout_s=120)) for p in loaded.procs]
    return {"load_s": load_s, "load_cpu": load_cpu,
            "upstream_s": loaded.timings.get("upstream_run_s", 0.0),
            "prove_s": time.monotonic() - start, "prove_cpu": time.process_time() - cpu,
            "rlimit": sum(o.rlimit for r in results for o in r.obligations),
            "verdict": ", ".join(f"{p.name} {r.verdict.value}"
                                 for p, r in zip(loaded.procs, results))}


def measure_k1(path: Path, python: str) -> dict[str, object]:
    """The GEMM's printed text with `assert K_split == 1` added (the size sporkbench and
    upstream's run test use), parsed and proved as the CLI would."""
    loaded = load_file(str(path), 300.0, python)
    (origin,) = loaded.scheduled_by
    last_assert = "    assert cluster_K % 4 == 0\n"
    text = "".join(linecache.getlines(origin.text_file)).replace(
        last_assert, last_assert + "    assert K_split == 1\n", 1)
    (p,) = parse_printed((PrintedProc("gemm", text, origin.text_file, True),))
    start, cpu = time.monotonic(), time.process_time()
    result = verify_proc(p, Options(timeout_s=120))
    return {"prove_s": time.monotonic() - start, "prove_cpu": time.process_time() - cpu,
            "rlimit": sum(o.rlimit for o in result.obligations),
            "verdict": f"gemm {result.verdict.value} ({len(result.obligations)} obligations)"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("python", help="a Python with upstream Exo-GPU installed")
    ap.add_argument("--sm90a-gemm", action="store_true",
                    help="add upstream's scheduled Sm90a GEMM (its exo.platforms.gemm_Sm90a_test)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"load average at start: {load_average()}")
    with tempfile.TemporaryDirectory() as tmp:
        files = {"scale_scheduled.py (ours)": ROOT / "examples" / "exo_gpu" /
                 "scale_scheduled.py"}
        if args.sm90a_gemm:
            gemm = Path(tmp) / "sm90a_sch_gemm_m1n2_B.py"
            gemm.write_text(GEMM_SCRIPT)
            files[GEMM] = gemm
        print(f"{'file':38} {'load s':>7} {'(cpu)':>6} {'upstr s':>7} {'prove s':>7} "
              f"{'(cpu)':>6} {'rlimit':>10}  verdict")
        rows = [(name, path, measure) for name, path in files.items()]
        if args.sm90a_gemm:
            rows.append(("  same, printed text + K_split == 1", files[GEMM], measure_k1))
        for name, path, how in rows:
            runs = [how(path, args.python) for _ in range(args.runs)]

            def med(key: str) -> float:
                return statistics.median(float(r.get(key, 0.0) or 0.0) for r in runs)
            print(f"{name:38} {med('load_s'):7.2f} {med('load_cpu'):6.2f} "
                  f"{med('upstream_s'):7.2f} {med('prove_s'):7.2f} {med('prove_cpu'):6.2f} "
                  f"{int(med('rlimit')):>10}  {runs[-1]['verdict']}")
    print(f"load average at end: {load_average()}")
    print("load s: the CLI's loader (ours, then upstream's run in PYTHON, then our parse of the "
          "printed text), wall; (cpu): CPU seconds of those child processes; upstr s: "
          "upstream running the file; prove s: all procs' proofs, wall, (cpu) this process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
