"""Machine state: thread sets, visibility records and hazards (semantics.md §2, §4-5).

A visibility set S ⊆ 𝔾 × Q × VF is stored as a set of `Grant` boxes (thread set × qual set ×
flag set), the representation semantics.md §12.3 suggests; the operations below are the
set-theoretic definitions of SEM-4.4..5.3 evaluated on those boxes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verifier.diagnostics import SrcLoc
from verifier.lang.timelines import QualTL
from verifier.semantics.rules import ALL_FLAGS, WITNESS_FLAGS, Flag, SyncSets, grant_flags_full


@dataclass(frozen=True, slots=True)
class Threads:
    """A set of global threads (task, n): `task=None` is every task (𝔾); `local=None` is every
    thread of the task's cluster."""

    task: int | None
    local: frozenset[int] | None

    def contains(self, task: int, n: int) -> bool:
        if self.task is None:
            return True
        return self.task == task and (self.local is None or n in self.local)

    def meets(self, other: "Threads") -> bool:
        if self.task is None:
            return other.task is None or other.local is None or bool(other.local)
        if other.task is None:
            return self.local is None or bool(self.local)
        if self.task != other.task:
            return False
        if self.local is None:
            return other.local is None or bool(other.local)
        return other.local is None or not self.local.isdisjoint(other.local)

    def members(self, num_threads: int) -> list[tuple[int, int]]:
        """Concrete members; only defined for a single task."""
        assert self.task is not None
        local = range(num_threads) if self.local is None else sorted(self.local)
        return [(self.task, n) for n in local]

    def describe(self) -> str:
        if self.task is None:
            return "all threads (CPU scope / kernel boundary)"
        if self.local is None:
            return f"task {self.task}, every thread"
        ids = sorted(self.local)
        if len(ids) > 6:
            return f"task {self.task}, threads {ids[0]}..{ids[-1]} ({len(ids)} threads)"
        return f"task {self.task}, thread{'s' if len(ids) != 1 else ''} " + \
            ", ".join(map(str, ids))


EVERYONE = Threads(None, None)


@dataclass(frozen=True, slots=True)
class Grant:
    threads: Threads
    quals: frozenset[QualTL]
    flags: frozenset[Flag]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a record came from, for counterexample reports."""

    loc: SrcLoc
    what: str  # "read" / "write-only mutate" / ...
    iterators: tuple[tuple[str, int], ...]
    threads: str


@dataclass(slots=True)
class Record:
    """A visibility record r = (S, P) (SEM-2.4)."""

    grants: set[Grant]
    pending: set[tuple[int, tuple[int, ...], int]]
    origin: Origin
    atomic_quals: frozenset[QualTL] = frozenset()
    alive: bool = True  # False once the history dropped it (SEM-2.6)

    def has(self, task: int | None, n: int | None, quals: frozenset[QualTL], flag: Flag) -> bool:
        for g in self.grants:
            if flag in g.flags and not quals.isdisjoint(g.quals) and \
                    (task is None or g.threads.contains(task, n if n is not None else 0)):
                return True
        return False

    def witnessed_by(self, threads: Threads, first: SyncSets) -> bool:
        """FW(C, τ1, r) (SEM-5.1)."""
        for g in self.grants:
            if g.flags & WITNESS_FLAGS and not first.full.isdisjoint(g.quals) and \
                    g.threads.meets(threads):
                return True
        return False

    def augment_full(self, threads: Threads, second: SyncSets) -> None:
        """r.S ∪= A_F(C, τ2) (SEM-5.2)."""
        if second.full:
            self.grants.add(Grant(threads, second.full, ALL_FLAGS))
        temporal_only = second.temporal - second.full
        if temporal_only:
            self.grants.add(Grant(threads, temporal_only, frozenset({Flag.temp})))

    def join(self, threads: Threads) -> None:
        """JoinThreads(C) (SEM-1.7)."""
        for g in list(self.grants):
            if g.threads.meets(threads):
                self.grants.add(Grant(threads, g.quals, g.flags))


def flags_for(q: QualTL, sets: SyncSets) -> frozenset[Flag]:
    return grant_flags_full(q, sets)


@dataclass(slots=True)
class History:
    """ρ(x, i) = (R, M) (SEM-2.2)."""

    reads: list[Record] = field(default_factory=list)
    mutates: list[Record] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Finding:
    """A machine error with full context (ERR-V01..V07)."""

    kind: str  # RAW | WAR | WAW | out-of-bounds | barrier-count | deadlock
    message: str
    variable: str | None
    index: tuple[int, ...]
    loc: SrcLoc
    later: Origin | None
    earlier: Origin | None
    lacking: str = ""
    sync_hint: str = ""


class MachineError(Exception):
    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding
