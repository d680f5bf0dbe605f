"""mbarrier rings: per-proc ring facts (guards and depth from `lang.guards`, LANG-5.15, 5.19)
and the completion order of the ring invariant (SEM-6.8), shared by the machine and encoder.

The completion order ≺ relates Arrive/Await instances: (po) p ≺ q when p precedes q in the trace
and every thread of q executes p; (pair) each Arrive numbered ≤ a_max(p) ≺ the Await p. The
machine keeps, per collective, the down-closure of its latest instance as a *clock*: for each
barrier element the largest n such that the n-th non-trivial Await on it is in the closure.
Awaits on one element are executed by one collective (LANG-5.12), so the set of such n is
downward closed and the maximum represents it exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verifier.lang import ir
from verifier.lang.guards import guard_map, ring_depth
from verifier.lang.memories import CudaMbarrier
from verifier.semantics.access import walk_stmts
from verifier.semantics.threads import Threads

ElementKey = tuple[int, tuple[int, ...]]  # (barrier instance serial, element)
Clock = dict[ElementKey, int]


@dataclass(frozen=True)
class RingInfo:
    """Per mbarrier variable: its guard, await lag and ring depth (from the proc's text)."""

    guarded_by: dict[ir.Sym, ir.Sym]
    lag: dict[ir.Sym, int]
    depth: dict[ir.Sym, int]


def ring_info(body: tuple[ir.Stmt, ...]) -> RingInfo:
    guards: dict[ir.Sym, ir.Sym | None] = {}
    lags: dict[ir.Sym, int] = {}
    for s in walk_stmts(body):
        if isinstance(s, ir.Alloc) and isinstance(s.typ, ir.BarrierType) \
                and s.typ.mech is CudaMbarrier:
            guards[s.name] = s.typ.guarded_by
        elif isinstance(s, ir.Await) and s.n < 0:
            lags.setdefault(s.target.buf, ~s.n)
    guarded_by = guard_map(guards)
    return RingInfo(guarded_by, lags, {z: ring_depth(z, guarded_by, lags) for z in guards})


def join(into: Clock, other: Clock) -> None:
    for k, n in other.items():
        if into.get(k, -1) < n:
            into[k] = n


@dataclass
class CompletionOrder:
    """The concrete completion order (SEM-6.8) over the Arrive/Await instances run so far."""

    latest: dict[int | None, dict[Threads, Clock]] = field(default_factory=dict)  # by task
    arrive_clocks: dict[ElementKey, list[Clock]] = field(default_factory=dict)

    def closure(self, threads: Threads) -> Clock:
        """Down-closure through po edges: instances run by every thread of `threads`."""
        out: Clock = {}
        for task in {threads.task, None}:
            for coll, clock in self.latest.get(task, {}).items():
                if _covers(coll, threads):
                    join(out, clock)
        return out

    def arrive(self, threads: Threads, key: ElementKey, number: int) -> Clock:
        clock = self.closure(threads)
        chain = self.arrive_clocks.setdefault(key, [])
        prefix = dict(chain[-1]) if chain else {}
        join(prefix, clock)
        assert len(chain) == number, "every arrive on an element passes through here"
        chain.append(prefix)
        self._record(threads, clock)
        return clock

    def await_(self, threads: Threads, key: ElementKey, a_max: int,
               nontrivial: int | None) -> None:
        clock = self.closure(threads)
        chain = self.arrive_clocks.get(key, [])
        if a_max >= 0 and chain:
            join(clock, chain[min(a_max, len(chain) - 1)])
        if nontrivial is not None and nontrivial >= 0:
            join(clock, {key: nontrivial})
        self._record(threads, clock)

    def _record(self, threads: Threads, clock: Clock) -> None:
        join(self.latest.setdefault(threads.task, {}).setdefault(threads, {}), clock)


def _covers(coll: Threads, threads: Threads) -> bool:
    """Every thread of `threads` is in `coll` (same task, or `coll` spans every task)."""
    return coll.task is None or threads.mask & ~coll.mask == 0
