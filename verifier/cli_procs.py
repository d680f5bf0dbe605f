"""The procs of one file proved side by side (CLI-7): a sporkbench file builds 4 to 8 procs,
and each proof is independent of the others, so on a machine with several cores a file costs
about its slowest procs, not their sum.

Each proof runs in a forked worker exactly as it would here (`prove(proc)`; the worker holds
the loaded procs already, nothing is sent to it) and only its `ProcResult` comes back, so
the results, their order and the verdicts are those of the sequential run (D4). A worker that
fails returns nothing and that proc is proved here, in order, where its error is reported as
it would have been. Ctrl-C (CLI-4) is the parent's: the workers ignore SIGINT and are ended
with the pool.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor, wait
from typing import Callable, Sequence

from verifier.cli_io import stop_if_interrupted
from verifier.lang.ir.ir import Proc
from verifier.results import ProcResult

_WORK: tuple[Sequence[Proc], Callable[[Proc], ProcResult]] | None = None  # read by the fork


def workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _prove_one(index: int) -> ProcResult | None:
    assert _WORK is not None
    procs, prove = _WORK
    try:
        return prove(procs[index])
    except Exception:  # noqa: BLE001  proved again in the parent, which reports the error
        return None


def prove_side_by_side(procs: Sequence[Proc], prove: Callable[[Proc], ProcResult],
                       cores: int) -> dict[int, ProcResult]:
    """`prove(p)` of every proc, by `id(p)`, computed in up to `cores` forked workers; empty
    where that cannot help (one proc, one core, no fork on this platform). A worker that dies
    (a solver crash, the OOM killer) breaks the pool: every proc not back by then is left to
    the parent, never waited for."""
    global _WORK
    if len(procs) < 2 or cores < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return {}
    _WORK = (procs, prove)
    pool = ProcessPoolExecutor(min(cores, len(procs)), multiprocessing.get_context("fork"),
                               initializer=_ignore_sigint)
    try:
        pending = [pool.submit(_prove_one, k) for k in range(len(procs))]
        out = {}
        for proc, answer in zip(procs, pending):
            while not answer.done():
                stop_if_interrupted()  # CLI-4: a safe point while the workers prove
                wait([answer], timeout=0.1)
            try:
                result = answer.result()
            except Exception:  # noqa: BLE001  a dead worker, or a result not back whole
                result = None
            if result is not None:
                out[id(proc)] = result
        return out
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _WORK = None
