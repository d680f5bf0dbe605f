"""`p.sync_check(**sizes)` as upstream's scripts call it: the concrete machine at those sizes
(API-3 in specs/upstream_api.md).

Upstream runs its own checker there and raises on the first hazard, stopping the script; so
does this one. Installed into `ir.SYNC_CHECK_HOOK` by the process entry (lang may not import
the machine).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from typing import Iterator, Mapping

from verifier.diagnostics import (
    InternalError, RejectedInput, SharedLimitation, SporkError, Unsupported)
from verifier.lang.ir import ir
from verifier.semantics.run import run_machine
from verifier.semantics.sync_remarks import log_sync_error


def sync_check(proc: ir.Proc, sizes: Mapping[str, int]) -> None:
    """Raise a located RejectedInput naming the proc if the machine finds an error at
    `sizes`, or if the sizes are incomplete or violate the proc's asserts (as upstream)."""
    controls = [a.name.name for a in proc.args if isinstance(a.typ, ir.Control)]
    missing = [n for n in controls if n not in sizes]
    unknown = [n for n in sizes if n not in controls]
    problem = (f"no value for {', '.join(missing)}" if missing else
               f"{', '.join(unknown)} is not a size or index argument" if unknown else None)
    if problem is None:
        try:
            with _budget(BUDGET_S):
                holds, findings = run_machine(proc, {k: int(v) for k, v in sizes.items()})
        except _OverBudget:
            print(f"spork-verify: {proc.name}.sync_check({_sizes(sizes)}) stopped after "
                  f"{BUDGET_S:g} s of the concrete machine; the proof for all sizes covers "
                  "these sizes (API-3)", file=sys.stderr)
            return
        except SharedLimitation as e:  # upstream's sync_check raises here too
            e.proc = e.proc or proc.name
            raise
        except Unsupported as e:  # the proof reports it for the proc; the script goes on
            print(f"spork-verify: {proc.name}.sync_check({_sizes(sizes)}) did not run: "
                  f"{e.message} (API-3)", file=sys.stderr)
            return
        except SporkError as e:
            e.proc = e.proc or proc.name
            raise
        except Exception as e:
            err = InternalError(f"{proc.name}.sync_check: the concrete machine failed: "
                                f"{type(e).__name__}: {e}", rule="API-3")
            err.proc = proc.name
            raise err from None
        if not holds:
            problem = "these sizes violate the proc's asserts"
        elif findings:
            f = findings[0]
            log_sync_error(proc, sizes, f)  # API-6: the debug log's sync-error remarks
            err = RejectedInput(f"{proc.name}.sync_check({_sizes(sizes)}) found a {f.kind} "
                                f"hazard: {f.message}{': ' + f.lacking if f.lacking else ''}",
                                f.loc, rule="API-3", variable=f.variable)
            err.proc = proc.name
            raise err
    if problem is not None:
        err = RejectedInput(f"{proc.name}.sync_check({_sizes(sizes)}): {problem}", rule="API-3")
        err.proc = proc.name
        raise err


BUDGET_S = 5.0  # seconds of the machine per call; beyond, the all-sizes proof covers the sizes


class _OverBudget(BaseException):
    """Raised by the timer inside the machine; a BaseException so nothing in it catches it."""


@contextlib.contextmanager
def _budget(seconds: float) -> Iterator[None]:
    """Interrupt the block after `seconds` (main thread only: elsewhere it runs unbounded)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _sizes(sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def install() -> None:
    ir.SYNC_CHECK_HOOK[0] = sync_check
