"""The held-out Hopper programs (tests/heldout_hopper/, issue 9): the verdict the spec predicts
(each file's `# expect:` header, written before the tool ran) next to spork-verify's, with the
median proof time, CPU seconds and Z3 resource units.

Usage: python3 benchmarks/heldout_hopper.py [--repeat 3] [--only SUBSTRING]

Each proc is loaded once and verified --repeat times in this process (no disk cache; a fresh
in-memory cache per run); a refutation counts as agreeing only when a replayed finding has the
predicted kind, variable and line. Wall times are medians; CPU seconds (this process and its
children) and Z3 units (deterministic, D1) are from the median run. The machine is shared and
noisy: the load average is printed with the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from conftest import expectations, load_one  # noqa: E402
from verifier.diagnostics import SporkError  # noqa: E402
from verifier.encode import verify_proc  # noqa: E402
from verifier.load.load import load_procs  # noqa: E402
from verifier.results import ProcResult  # noqa: E402

HELDOUT = ROOT / "tests" / "heldout_hopper"


def cpu() -> float:
    t = os.times()
    return t.user + t.children_user


def ours(exp, result: ProcResult | None, static: SporkError | None) -> tuple[str, bool]:  # type: ignore[no-untyped-def]
    """Our verdict as text, and whether it agrees with the prediction."""
    if static is not None:
        return f"rejected {static.code}", exp.verdict == "rejected" and static.code == exp.kind
    assert result is not None
    v = result.verdict.value
    if v == "rejected":
        code = result.findings[0].code
        return f"rejected {code}", exp.verdict == "rejected" and code == exp.kind
    if v != "refuted":
        return v, v == exp.verdict
    hits = [f for f in result.findings if f.counterexample is not None
            and f.counterexample.replayed and f.kind.value == exp.kind
            and f.variable == exp.variable and f.loc.line == exp.line]
    first = hits[0] if hits else result.findings[0]
    text = f"refuted {first.kind.value} {first.variable} {first.loc.line}"
    return text, exp.verdict == "refuted" and bool(hits)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    rows = []
    for path in sorted(HELDOUT.glob("*.py")):
        for exp in expectations(path):
            if args.only not in exp.proc:
                continue
            runs = []
            for _ in range(args.repeat):
                static, result = None, None
                t0, c0 = time.perf_counter(), cpu()
                try:
                    if exp.verdict == "rejected":
                        procs = {p.name: p for p in load_procs(path)}
                        result = verify_proc(procs[exp.proc])
                    else:
                        result = verify_proc(load_one(path, exp.proc))
                except SporkError as e:  # rejected at decoration time
                    static = e
                wall, used = time.perf_counter() - t0, cpu() - c0
                units = sum(o.rlimit for o in result.obligations) if result else 0
                runs.append((wall, used, units, result, static))
            runs.sort(key=lambda r: r[0])
            wall, used, units, result, static = runs[len(runs) // 2]
            spec = " ".join(str(x) for x in (exp.verdict, exp.kind, exp.variable, exp.line)
                            if x is not None)
            got, agree = ours(exp, result, static)
            rows.append((exp.proc, spec, got, agree, statistics.median(r[0] for r in runs),
                         used, units))
    print(f"held-out Hopper programs: {len(rows)} procs, median of {args.repeat}; "
          f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (shared 2-core "
          f"machine: noisy)")
    print(f"| program | spec predicts | spork-verify | agree | median s | CPU s | Z3 units |")
    print("|---|---|---|---|---|---|---|")
    for name, spec, got, agree, wall, used, units in rows:
        print(f"| {name} | {spec} | {got} | {'yes' if agree else 'NO'} | {wall:.2f} | "
              f"{used:.2f} | {units:,} |")
    bad = [r[0] for r in rows if not r[3]]
    print(f"agreement: {len(rows) - len(bad)}/{len(rows)}" + (f"; disagree: {bad}" if bad else ""))


if __name__ == "__main__":
    main()
