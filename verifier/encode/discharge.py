"""Where answers come from: this process's memory, the on-disk proof cache, worker processes
(`--jobs N`), or `solver.solve` right here.

Every source returns what `solve` computes for the query (it is a function of the query's
text and budget), so which one answered never changes a verdict (D3, D4 in
specs/verification.md). Workers only solve texts: each has its own Z3 contexts, and the
verifier's own state (replays, refinement, premises) stays in the calling process.
"""

from __future__ import annotations

import atexit
import multiprocessing
import signal
from multiprocessing.pool import AsyncResult, Pool

from verifier.encode.proof_cache import ProofCache
from verifier.encode.solver import WALL_NET_S, Answer, Query, solve

_MEMORY: dict[str, Answer] = {}  # answers of this process, by Query.key
_POOLS: dict[int, Pool] = {}  # worker pools by size, shared by the runs of one process


def clear_cache() -> None:
    """Forget this process's answers (benchmarks measure cold proofs)."""
    _MEMORY.clear()


def stop_workers() -> None:
    """End every worker process (at exit, or when their answers are no longer wanted)."""
    for pool in _POOLS.values():
        pool.terminate()
        pool.join()
    _POOLS.clear()


def _worker_init() -> None:
    """Ctrl-C is the parent's to handle: it stops the pool (CLI-4)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Discharger:
    """Answers for one verification run."""

    def __init__(self, jobs: int = 1, cache: ProofCache | None = None,
                 wall_s: float = WALL_NET_S) -> None:
        self.jobs = max(1, jobs)
        self.cache = cache
        self.wall_s = wall_s
        self._pending: dict[str, AsyncResult] = {}
        self._done: dict[str, Answer] = {}  # answered in this run (safety-net stops too)
        self.solved = 0  # queries this run had to solve (not from memory or disk)

    def _known(self, q: Query) -> Answer | None:
        hit = self._done.get(q.key) or _MEMORY.get(q.key)
        if hit is None and self.cache is not None:
            hit = self.cache.get(q.key)
            if hit is not None:
                _MEMORY[q.key] = hit
        return hit

    def submit(self, q: Query) -> None:
        """Start solving `q` in a worker, if there are workers and it is not known."""
        if self.jobs == 1 or q.key in self._pending or self._known(q) is not None:
            return
        if self.jobs not in _POOLS:
            ctx = multiprocessing.get_context("forkserver")
            _POOLS[self.jobs] = ctx.Pool(self.jobs, initializer=_worker_init)
        self._pending[q.key] = _POOLS[self.jobs].apply_async(solve, (q, self.wall_s))

    def answer(self, q: Query) -> Answer:
        """The answer to `q`, waiting for its worker or solving it here."""
        hit = self._known(q)
        if hit is not None:
            return hit
        pending = self._pending.pop(q.key, None)
        return self._record(q, pending.get() if pending is not None else
                            solve(q, self.wall_s))

    def peek(self, q: Query) -> Answer | None:
        """The answer to `q` if it is known without waiting."""
        pending = self._pending.get(q.key)
        if pending is not None and pending.ready():
            del self._pending[q.key]
            return self._record(q, pending.get())
        return None if pending is not None else self._known(q)

    def _record(self, q: Query, answer: Answer) -> Answer:
        self.solved += 1
        self._done[q.key] = answer
        if answer.deterministic:  # a safety-net stop depends on the load: never reused
            _MEMORY[q.key] = answer
            if self.cache is not None:
                self.cache.put(q.key, answer)
        return answer

    def close(self) -> None:
        """Forget unanswered queries; a run that ends early (an error, Ctrl-C) stops the
        workers so that none keeps solving for nobody."""
        if any(not p.ready() for p in self._pending.values()):
            stop_workers()
        self._pending.clear()

    def __enter__(self) -> "Discharger":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


atexit.register(stop_workers)
