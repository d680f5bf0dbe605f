"""mbarrier rings: per-proc ring facts (guards and depth from `lang.ir.guards`, LANG-5.15, 5.19)
and the completion order of the ring invariant (SEM-6.8), shared by the machine and encoder.

The completion order ≺ relates Arrive/Await instances: (po) p ≺ q when p precedes q in the trace
and every thread of q executes p; (pair) each Arrive numbered ≤ a_max(p) ≺ the Await p. The
machine keeps, per collective, the down-closure of its latest instance as a *clock*: for each
barrier element the largest n such that the n-th non-trivial Await on it is in the closure.
Awaits on one element are executed by one collective (LANG-5.12), so the set of such n is
downward closed and the maximum represents it exactly.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from verifier.lang.ir import ir
from verifier.lang.ir.guards import guard_map, ring_depth
from verifier.lang.stdlib.memories import CudaMbarrier
from verifier.semantics.access import walk_stmts
from verifier.semantics.threads import Threads

ElementKey = tuple[int, tuple[int, ...]]  # (barrier instance serial, element)
Clock = dict[ElementKey, int]


Mask = tuple[bool, ...]  # per barrier dimension: does this expression multicast over it?


@dataclass(frozen=True)
class RingInfo:
    """Per mbarrier variable: its guard, await lag and ring depth (from the proc's text), and
    its multicast pattern (one mask per barrier expression of its Arrives, LANG-5.11)."""

    guarded_by: dict[ir.Sym, ir.Sym]
    lag: dict[ir.Sym, int]
    depth: dict[ir.Sym, int]
    pattern: dict[ir.Sym, tuple[Mask, ...]] = field(default_factory=dict)

    def group(self, sym: ir.Sym, elem: tuple[int, ...], shape: tuple[int, ...]
              ) -> list[tuple[int, ...]]:
        """G(b) (SEM-6.1): the homes h whose Arrives name b = elem: h agrees with b on every
        dimension some expression of the pattern holds as a point."""
        masks = self.pattern.get(sym, ())
        if not any(any(m) for m in masks):
            return [elem]
        out: list[tuple[int, ...]] = []
        for mask in masks:
            ranges = [range(n) if m else range(e, e + 1) for m, e, n in zip(mask, elem, shape)]
            for h in itertools.product(*ranges):
                if h not in out:
                    out.append(tuple(h))
        return sorted(out)


def multicast_mask(ref: ir.BarrierRef, shape: tuple[int, ...]) -> Mask:
    """An interval multicasts unless it is `0:1` over an extent-1 dimension (LANG-5.7)."""
    return tuple(isinstance(a, ir.Interval) and n != 1 for a, n in zip(ref.idx, shape))


def ring_info(body: tuple[ir.Stmt, ...]) -> RingInfo:
    guards: dict[ir.Sym, ir.Sym | None] = {}
    lags: dict[ir.Sym, int] = {}
    shapes: dict[ir.Sym, tuple[int, ...]] = {}
    pattern: dict[ir.Sym, tuple[Mask, ...]] = {}
    for s in walk_stmts(body):
        if isinstance(s, ir.Alloc) and isinstance(s.typ, ir.BarrierType):
            shapes[s.name] = tuple(d.value if isinstance(d, ir.Const) else 0
                                   for d in s.typ.shape)
            if s.typ.mech is CudaMbarrier and s.typ.ring is None:  # endgame rings: DIAL-7
                guards[s.name] = s.typ.guarded_by
        elif isinstance(s, ir.Await) and s.n < 0:
            lags.setdefault(s.target.buf, ~s.n)
        elif isinstance(s, ir.Arrive) and s.targets and s.targets[0].buf in shapes:
            sym = s.targets[0].buf
            pattern.setdefault(sym, tuple(multicast_mask(r, shapes[sym]) for r in s.targets))
    guarded_by = guard_map(guards)
    return RingInfo(guarded_by, lags, {z: ring_depth(z, guarded_by, lags) for z in guards},
                    pattern)


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
               nontrivial: int | None, homes: list[ElementKey] | None = None) -> None:
        """An Await on `key` pairs with the arrives numbered ≤ a_max of every home in its
        multicast group (`homes`, default: itself)."""
        clock = self.closure(threads)
        for home in homes or [key]:
            chain = self.arrive_clocks.get(home, [])
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
