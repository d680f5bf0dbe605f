"""The schedules DIAL-11 may satisfy every Await in (specs/dialects.md DIAL-11), shared by the
concrete machine and the Z3 encoder.

An endgame ring Await blocks until the one-shot arrive #0 of every home of its multicast group
has come; Arrives never block. By that monotonicity, no fair execution hangs on such Awaits
when ONE interleaving that respects each thread's program order has every Await after the
arrives it needs. Two such interleavings are tried, each for every Await of the proc at once
(choosing per Await is unsound: tests/programs_endgame/ring_cross_hang.py):

* the sequential trace (SEM-1.8), every loop's iterations one after the other;
* lockstep: the iterations of every `cuda_threads` loop advance together, statement by
  statement (a thread-loop iterator does not order two instances; the rest of the trace
  order does).

`TIED` is the one table: the loop kinds whose sibling iterations a schedule does not order.
The machine runs the sequential trace and logs the lockstep position of every ring Arrive and
Await (`AwaitLog`); the encoder counts arrives with `counting.count_before(..., schedule)`.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from enum import Enum

from verifier.lang.ir import ir


class Schedule(Enum):
    SEQUENTIAL = "the sequential trace"
    LOCKSTEP = "the lockstep schedule (sibling cuda_threads iterations statement by statement)"


SCHEDULES = (Schedule.SEQUENTIAL, Schedule.LOCKSTEP)

# loop kinds (check/sites.Loop.kind) whose iterations a schedule runs together
TIED: dict[Schedule, frozenset[str]] = {
    Schedule.SEQUENTIAL: frozenset(),
    Schedule.LOCKSTEP: frozenset({"threads"}),
}


def tied(schedule: Schedule, kind: str) -> bool:
    return kind in TIED[schedule]


def loop_kind(mode: object) -> str:
    """The kind of an IR loop, as check/sites.Loop names it."""
    if isinstance(mode, ir.CudaThreads):
        return "threads"
    return "task" if isinstance(mode, ir.CudaTasks) else "seq"


Layout = tuple["int | ir.Sym", ...]  # static positions and the loop iterators between them


def layouts(body: tuple[ir.Stmt, ...], schedule: Schedule) -> dict[int, Layout]:
    """For every Arrive and Await (by id): its position in `schedule` as a flat key, the
    statement index at each level and the iterator of each enclosing loop the schedule orders
    by (a tied loop contributes nothing): keys of two instances compare as the schedule
    orders them (their common prefix has one shape)."""
    out: dict[int, Layout] = {}

    def walk(stmts: tuple[ir.Stmt, ...], prefix: Layout) -> None:
        for i, s in enumerate(stmts):
            here = prefix + (i,)
            match s:
                case ir.Arrive() | ir.Await():
                    out[id(s)] = here
                case ir.If(body=body, orelse=orelse):
                    walk(body, here + (0,))
                    walk(orelse, here + (1,))
                case ir.For(iter=sym, mode=mode, body=body):
                    walk(body, here if tied(schedule, loop_kind(mode)) else here + (sym,))
                case ir.DeviceFunction(body=body) | ir.Warps(body=body):
                    walk(body, here)
                case _:
                    pass

    walk(body, ())
    return out


def position(layout: Layout, env: dict[ir.Sym, int]) -> tuple[int, ...]:
    return tuple(env[e] if isinstance(e, ir.Sym) else e for e in layout)


ElementKey = tuple[int, tuple[int, ...]]  # (barrier allocation serial, element)


@dataclass(frozen=True)
class LoggedAwait:
    at: tuple[int, ...]
    homes: tuple[ElementKey, ...]
    a_max: int
    pre: tuple[int, ...]  # pre-arrives (DIAL-3) of each home
    what: str  # "z[elem] at file:line", for messages


@dataclass
class AwaitLog:
    """The machine's record of ring Arrives and Awaits at their lockstep positions."""

    layout: dict[int, Layout]
    arrives: dict[ElementKey, list[tuple[int, ...]]] = field(default_factory=dict)
    awaits: list[LoggedAwait] = field(default_factory=list)

    def arrive(self, s: ir.Arrive, env: dict[ir.Sym, int], counted: list[ElementKey]) -> None:
        at = position(self.layout[id(s)], env)
        for key in counted:
            bisect.insort(self.arrives.setdefault(key, []), at)

    def await_(self, s: ir.Await, env: dict[ir.Sym, int], homes: list[ElementKey],
               a_max: int, pre: list[int], what: str) -> None:
        self.awaits.append(LoggedAwait(position(self.layout[id(s)], env), tuple(homes),
                                       a_max, tuple(pre), what))

    def first_unsatisfied(self) -> LoggedAwait | None:
        """The first logged Await (sequential order) some home of which has at most a_max
        arrives before it in the lockstep schedule."""
        for w in self.awaits:
            for home, pre in zip(w.homes, w.pre):
                if pre + bisect.bisect_left(self.arrives.get(home, []), w.at) <= w.a_max:
                    return w
        return None
