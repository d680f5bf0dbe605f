"""The cvc5 side of `--recheck cvc5`, run as its own process (`python -m
verifier.encode.recheck_child`): a crash, a hang or Ctrl-C inside cvc5 never reaches the
verifier, which kills this process when it is done or stopped.

Protocol, one JSON object a line: first this process writes `{"solver": "cvc5-1.4.2"}` (or
`{"error": ...}` when cvc5 cannot be imported); then for each request `{"text": SMT-LIB2,
"timeout_ms": N}` it answers `{"answer": "unsat"|"sat"|"unknown", "reason": ..., "time_s": ...}`.
Each query gets a fresh solver with logic ALL and cvc5's default options, which decide every
query of the examples, quantifiers, div/mod and uninterpreted functions included
(proofs/regenerate.py --recheck counts them). Non-goals: models, proofs, reading files.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from typing import Any


def decide(cvc5: Any, text: str, timeout_ms: int) -> dict[str, Any]:
    """cvc5's answer to one SMT-LIB2 benchmark (its last `check-sat`)."""
    start = time.perf_counter()
    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    solver.setLogic("ALL")
    solver.setOption("tlimit-per", str(max(timeout_ms, 1)))
    symbols = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(solver, symbols)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "query")
    answer, reason = "unknown", "the query has no check-sat"
    try:
        while not (command := parser.nextCommand()).isNull():
            if command.getCommandName() == "check-sat":
                result = solver.checkSat()
                answer = "unsat" if result.isUnsat() else "sat" if result.isSat() else "unknown"
                reason = "" if answer != "unknown" else str(result.getUnknownExplanation())
            else:
                command.invoke(solver, symbols)
    except RuntimeError as e:  # a parse error or an unsupported command: decides nothing
        answer, reason = "unknown", f"cvc5 cannot read the query: {e}"
    if answer == "unknown" and "TIMEOUT" in reason.upper():
        reason = f"timeout ({timeout_ms} ms)"
    return {"answer": answer, "reason": reason, "time_s": time.perf_counter() - start}


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when this process ends
    try:
        import cvc5
    except ImportError as e:
        print(json.dumps({"error": f"cvc5 is not installed ({e})"}), flush=True)
        return 0
    print(json.dumps({"solver": f"cvc5-{cvc5.__version__}"}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps(decide(cvc5, request["text"], request["timeout_ms"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
