"""Machine state: thread sets, visibility records and hazards (semantics.md §2, §4-5).

A visibility set S ⊆ 𝔾 × Q × VF is stored as a set of `Grant` boxes (thread set × qual set ×
flag set), the representation semantics.md §12.3 suggests; the operations below are the
set-theoretic definitions of SEM-4.4..5.3 evaluated on those boxes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verifier.diagnostics import SrcLoc
from verifier.lang.timelines import QualTL
from verifier.semantics.rules import ALL_FLAGS, WITNESS_FLAGS, Flag, SyncSets


@dataclass(frozen=True, slots=True)
class Threads:
    """A set of global threads (task, n): `task=None` is every task (𝔾); `local=None` is every
    thread of the task's cluster."""

    task: int | None
    local: frozenset[int] | None

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


def _minus(a: Threads, cover: list[Threads]) -> Threads | None:
    """a \\ ⋃cover as a thread set (None if empty); only for a single-task `a`."""
    if any(c.task is None or (c.task == a.task and c.local is None) for c in cover):
        return None
    assert a.task is not None and a.local is not None
    rest = set(a.local)
    for c in cover:
        if c.task == a.task and c.local is not None:
            rest -= c.local
    return Threads(a.task, frozenset(rest)) if rest else None


@dataclass(slots=True)
class Record:
    """Visibility records (SEM-2.4) with a shared augment set.

    `per_thread` False: one record whose S is T × {q0} × F0 ∪ A (a convergent access).
    `per_thread` True: the family {r_g | g ∈ T} with r_g.S = {g} × {q0} × F0 ∪ A — one record
    per thread of a non-convergent access (SEM-4.4), kept together while every sync treats its
    members alike and split when one does not. `pending` likewise holds for every member.
    """

    threads: Threads
    q0: QualTL
    flags0: frozenset[Flag]
    per_thread: bool
    grants: set[Grant]
    pending: set[tuple[int, tuple[int, ...], int]]
    origin: Origin
    atomic_quals: frozenset[QualTL] = frozenset()
    alive: bool = True  # False once the history dropped it (SEM-2.6)
    home: list["Record"] | None = None  # the history list holding it

    def cover(self, quals: frozenset[QualTL], flag: Flag) -> list[Threads]:
        return [g.threads for g in self.grants if flag in g.flags and not quals.isdisjoint(g.quals)]

    def lacking(self, threads: Threads, quals: frozenset[QualTL], flag: Flag, conv: bool
                ) -> Threads | None:
        """Vis(conv, C, X, f, r) for every record of the family (SEM-4.5); the threads (of C,
        or of the family) lacking visibility, None when it holds."""
        cover = self.cover(quals, flag)
        initial = self.q0 in quals and flag in self.flags0
        if initial and not self.per_thread:
            cover = cover + [self.threads]
        if threads.task is None:  # CPU scope (convergent, 𝔾)
            ok = bool(cover) or (initial and self.per_thread)
            return None if ok else threads
        if conv:
            if any(c.meets(threads) for c in cover):
                return None
            if initial and self.per_thread:
                missing = _minus(self.threads, [threads]) if self.threads.task is not None \
                    else None
                return missing
            return threads
        missing = _minus(threads, cover)
        if missing is None:
            return None
        if initial and self.per_thread and self.threads.local is not None \
                and len(self.threads.local) == 1 and missing.local == self.threads.local \
                and missing.task == self.threads.task:
            return None
        return missing

    def witnessed(self, threads: Threads, first: SyncSets) -> Threads | None:
        """The members witnessed by a sync of C with τ1 (SEM-5.1): all, some, or none."""
        for g in self.grants:
            if g.flags & WITNESS_FLAGS and not first.full.isdisjoint(g.quals) and \
                    g.threads.meets(threads):
                return self.threads
        if self.q0 not in first.full or not self.flags0 & WITNESS_FLAGS:
            return None
        if not self.per_thread:
            return self.threads if self.threads.meets(threads) else None
        return _intersect(self.threads, threads)

    def split(self, part: Threads) -> "Record":
        """Detach the members in `part` into a new family; returns it (or self if all)."""
        if part == self.threads or not self.per_thread:
            return self
        assert self.threads.local is not None and part.local is not None
        rest = Threads(self.threads.task, self.threads.local - part.local)
        self.threads = rest
        new = Record(part, self.q0, self.flags0, True, set(self.grants), set(self.pending),
                     self.origin, self.atomic_quals, True, self.home)
        if self.home is not None:
            self.home.append(new)
        return new

    def augment_full(self, threads: Threads, second: SyncSets) -> None:
        """r.S ∪= A_F(C, τ2) (SEM-5.2)."""
        if second.full:
            self.grants.add(Grant(threads, second.full, ALL_FLAGS))
        temporal_only = second.temporal - second.full
        if temporal_only:
            self.grants.add(Grant(threads, temporal_only, frozenset({Flag.temp})))

    def join(self, threads: Threads) -> "Record | None":
        """JoinThreads(C) (SEM-1.7); returns a split-off family if members differ."""
        for g in list(self.grants):
            if g.threads.meets(threads):
                self.grants.add(Grant(threads, g.quals, g.flags))
        inside = _intersect(self.threads, threads) if self.per_thread else \
            (self.threads if self.threads.meets(threads) else None)
        if inside is None:
            return None
        target = self.split(inside)
        target.grants.add(Grant(threads, frozenset({self.q0}), self.flags0))
        return target if target is not self else None


def _intersect(a: Threads, b: Threads) -> Threads | None:
    if a.task is None:
        return b if b.task is not None else a
    if b.task is None:
        return a
    if a.task != b.task:
        return None
    if a.local is None:
        return b
    if b.local is None:
        return a
    common = a.local & b.local
    return Threads(a.task, common) if common else None


@dataclass(slots=True)
class History:
    """ρ(x, i) = (R, M) (SEM-2.2)."""

    reads: list[Record] = field(default_factory=list)
    mutates: list[Record] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Finding:
    """A machine error with full context (ERR-V01..V07)."""

    kind: str  # RAW | WAR | WAW | out-of-bounds | barrier-count | deadlock | ring-overrun
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
