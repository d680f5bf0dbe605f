"""`run_machine`: the concrete machine at concrete sizes, as every caller runs it.

A run that stops at the first error (`--sizes`, `p.sync_check(...)`, the first replay of a
counterexample, the differential oracle) runs the batched machine first (fast.py); if it meets
an error or anything else it does not model, the reference machine (machine.py) runs again from
the start and its result is the one returned. Collect-all, targeted and release runs run the
reference machine only. Both give the same result by construction; tests pin them together
(tests/test_machine_fast.py).
"""

from __future__ import annotations

from typing import Mapping

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.semantics.fast import Diverge, FastMachine
from verifier.heap import keep_freed_blocks
from verifier.semantics.machine import run_reference
from verifier.semantics.state import Finding


def run_machine(proc: ir.Proc, sizes: Mapping[str, int], collect_all: bool = False,
                stop_at: tuple[str, str | None, SrcLoc] | None = None,
                only: frozenset[str] | None = None, releases: bool = False,
                batched: bool = True) -> tuple[bool, list[Finding]]:
    """Run at `sizes`; returns (preconditions hold, errors in trace order). With `stop_at`,
    a collect-all run ends at the first error with that (kind, variable, location). With
    `only` (collect-all runs), hazards are checked on those variables alone: the run reports
    exactly the errors of a whole collect-all run that concern them (Choice M8). `batched`
    False runs the reference machine alone."""
    keep_freed_blocks(1 << 30, 1 << 30)  # region arrays stay in the heap (Choice M14)
    if batched and not collect_all and stop_at is None and only is None and not releases:
        try:
            holds, found = run_reference(proc, sizes, machine=FastMachine)
            if not found:
                return holds, found
        except Diverge:
            pass
        except Exception:  # noqa: BLE001 - the reference run raises it again, or reports first
            pass
    return run_reference(proc, sizes, collect_all, stop_at, only, releases)
