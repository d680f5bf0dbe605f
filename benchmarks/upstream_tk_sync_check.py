"""spork-verify's verdicts on the ThunderKittens kernels against upstream's own sync_check.

Usage: python3 benchmarks/upstream_tk_sync_check.py --upstream-python PY [--size N]
       (CAMSPORK_JIT_DIR naming upstream's built camspork library)

For every kernel of tests/programs_tk (TK-1..TK-3), spork-verify's verdict for all sizes is
compared with what upstream Exo-GPU (its newest branch, with exo.platforms.cuda_tk) says of
the same file run under upstream's imports (benchmarks/upstream_tk_child.py), at one size
(every size argument = N): proved <-> its sync_check passes, refuted <-> its machine reports a
hazard of the same kind (a hazard at a free: upstream's free_missing_sync), rejected <->
upstream refuses the proc while building or checking it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from harness import ROOT, child_json, load_average

sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from conftest import expectations  # noqa: E402

from verifier.encode import verify_proc  # noqa: E402
from verifier.lang.ir import ir  # noqa: E402
from verifier.load.load import load_procs  # noqa: E402


def agrees(verdict: str, kind: str, upstream: dict[str, str]) -> bool:
    said, message = upstream["upstream"], upstream["message"]
    if verdict == "proved":
        return said == "passes"
    if verdict == "refuted":
        return said == "hazard" and (f"{kind} HAZARD" in message or
                                     (kind in ("WAR", "WAW") and "free_missing" in message))
    return said == "rejects"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream-python", required=True)
    ap.add_argument("--size", type=int, default=128)
    args = ap.parse_args()
    start = time.perf_counter(), time.process_time()
    print(f"load average at start: {load_average()}")
    print(f"{'kernel':32} {'spork-verify (all sizes)':34} {'upstream sync_check':44} agree")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    total = agreed = 0
    for path in sorted((ROOT / "tests" / "programs_tk").glob("*.py")):
        (exp,) = expectations(path)
        try:
            procs = {p.name: p for p in load_procs(path)}
            result = verify_proc(procs[exp.proc])
            verdict = result.verdict.value
            kind = result.findings[0].kind.value if result.findings else ""
            proc = procs[exp.proc]
        except Exception as e:  # rejected while the file loads (LOAD-3)
            verdict, kind, proc = "rejected", getattr(e, "code", ""), None
        sizes = {a.name.name: args.size for a in (proc.args if proc else ())
                 if isinstance(a.typ, ir.Control)}
        upstream = child_json([args.upstream_python, str(ROOT / "benchmarks" /
                               "upstream_tk_child.py"), str(path), exp.proc,
                               json.dumps(sizes)], env=env)
        ok = agrees(verdict, kind, upstream)
        total, agreed = total + 1, agreed + ok
        print(f"{path.stem:32} {(verdict + ' ' + kind).strip():34} "
              f"{(upstream['upstream'] + ': ' + upstream['message'])[:44]:44} "
              f"{'yes' if ok else 'NO'}")
    print(f"{agreed} of {total} agree (upstream at every size argument = {args.size})")
    print(f"load average at end: {load_average()}; {time.perf_counter() - start[0]:.0f} s wall, "
          f"{time.process_time() - start[1]:.1f} CPU s in spork-verify's process")
    return 0 if agreed == total else 1


if __name__ == "__main__":
    sys.exit(main())
