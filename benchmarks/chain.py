"""Time of the chain of equivalence with exo-lang (issue 12, specs/chain.md) per kernel.

Usage: python3 benchmarks/chain.py [--sporkbench SPORKBENCH_CHECKOUT] [--repeat 3] [--quick]

Rows: every bundled example whose chain is proved (tests/chain_support.py PROVED), the seeded
wrong GEMMs (refuted: proof, replay and all), block_reduce (the labelled fallback) and, with
--sporkbench, every proc of sporkbench's examples/Sm80_gemm against
examples/chain/sporkbench_gemm_ref.py (copied to a temporary folder first: loading those files
writes a .json beside them). The time is `check_chain` alone (the kernel is loaded once before),
the median of --repeat runs, wall and CPU (this process and its children: the exo-lang child
that reads the reference and runs replays, gcc), so the CPU column stays meaningful on a loaded
machine. The machine is shared and noisy: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from chain_support import MUTANTS, PROVED, proc_name, write_mutant  # noqa: E402

from verifier.chain.check import check_chain  # noqa: E402
from verifier.lang.ir import ir  # noqa: E402
from verifier.load.load_isolated import load_isolated  # noqa: E402

EXAMPLES = ROOT / "examples"
SPORKBENCH_REF = str(EXAMPLES / "chain" / "sporkbench_gemm_ref.py")


def load(path: Path, name: str | None = None) -> list[ir.Proc]:
    loaded = load_isolated(str(path), 300)
    if loaded.error is not None:
        raise SystemExit(f"{path}: {loaded.error.render()}")
    return [p for p in loaded.procs if name is None or p.name == name]


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def measure(p: ir.Proc, ref: str, repeat: int) -> tuple[str, list[float], list[float], str]:
    """Wall and CPU seconds (this process and its children: the exo-lang child, gcc)."""
    walls, cpus, status, note = [], [], "", ""
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _cpu()
        chain, finding = check_chain(p, ref, None, 120.0)
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
        status = chain.status.value
        note = finding.message if finding is not None else chain.message
    return status, walls, cpus, note


def cases(args: argparse.Namespace, tmp: Path) -> list[tuple[str, ir.Proc, str]]:
    out = [(f"examples/{file}.py", p, ref) for file, name, ref in PROVED
           for p in load(EXAMPLES / f"{file}.py", name)]
    out += [("examples/block_reduce.py (fallback)", p,
             str(EXAMPLES / "chain" / "row_sums_ref.py") + ":row_sums")
            for p in load(EXAMPLES / "block_reduce.py")]
    if not args.quick:
        for m in MUTANTS.values():
            out += [(f"mutant {m.example}/{m.name}", p, m.reference)
                    for p in load(write_mutant(m, tmp), proc_name(m))]
    if args.sporkbench:
        folder = tmp / "Sm80_gemm"
        shutil.copytree(Path(args.sporkbench) / "examples" / "Sm80_gemm", folder)
        for path in sorted(folder.glob("exocc_*.py")):
            for p in load(path):
                ref = "gemm_split_k" if "splitK" in p.name else "gemm_data_parallel"
                out.append((f"sporkbench {p.name}", p, f"{SPORKBENCH_REF}:{ref}"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sporkbench", metavar="CHECKOUT")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="no mutants")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} CPUs, shared machine: times are noisy)")
    print(f"{'case':<66} {'reference':<40} {'chain':<9} {'wall s':>7} {'cpu s':>7}  (medians "
          f"of {args.repeat})")
    with tempfile.TemporaryDirectory() as tmp:
        for label, p, ref in cases(args, Path(tmp)):
            status, walls, cpus, note = measure(p, ref, args.repeat)
            print(f"{label:<66} {ref.rpartition('/')[2]:<40} {status:<9} "
                  f"{statistics.median(walls):>7.2f} {statistics.median(cpus):>7.2f}")
            if status not in ("proved", "tested"):
                print(f"    {note[:300]}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
