"""Coverage maps of visibility records and the sync-tl codes the rules read (SEM-2.4, 5.1, 5.2).

A record's visibility set S ⊆ 𝔾 × Q × VF is its initial part T × {q0} × F0 plus a coverage
map: for every (qual-tl, flag) pair, the threads holding it, per task (`None`: every task).
Thread sets are bitmasks (threads.py) and qual-tls / flags small integers, so each rule is a
few dictionary and integer operations. Maps are immutable shared `Cov` objects (Choice M13);
records.py holds the records and the rules on their initial parts.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.lang.stdlib.timelines import QualTL
from verifier.semantics.rules import Flag, SyncSets
from verifier.semantics.threads import ALL, Threads

QUALS = tuple(QualTL)
QIDX = {q: i for i, q in enumerate(QUALS)}
FIDX = {Flag.issue: 0, Flag.full: 1, Flag.temp: 2, Flag.atom: 3}
FLAGS_ALL = 0b1111
WITNESS_BITS = 0b0011  # issue, full (SEM-5.1)
TEMP = FIDX[Flag.temp]


def witness_flag(ordering: bool, qv: int) -> bool:
    """Whether coverage (qual-tl, flag) `qv` lets a sync witness the record: issue or full;
    for an ordering-only record (endgame ring storage, DIAL-6) temp too: ordering is all its
    accesses need, and an mbarrier's arrive/wait order transitively."""
    return qv & 3 < 2 or (ordering and qv & 3 == TEMP)


Cover = dict[int | None, int]  # task (None: every task) -> mask of local threads


def qual_bits(quals: frozenset[QualTL]) -> int:
    out = 0
    for q in quals:
        out |= 1 << QIDX[q]
    return out


@dataclass(frozen=True, slots=True)
class SyncCode:
    """A sync-tl's sets as the integers the rules use (SEM-3.4, SEM-5.1, SEM-5.2)."""

    full_bits: int
    full_quals: tuple[int, ...]
    witness_qvs: tuple[int, ...]  # (q, v) for q ∈ F, v ∈ {issue, full}
    augment_qvs: tuple[int, ...]  # A_F: F × VF ∪ (T \ F) × {temp}
    # T: the qual-tls on which a sync orders an ordering-only record (ring storage, DIAL-6)
    order_bits: int = 0
    order_quals: tuple[int, ...] = ()

    @staticmethod
    def of(sets: SyncSets) -> "SyncCode":
        full = tuple(sorted(QIDX[q] for q in sets.full))
        temporal = tuple(sorted(QIDX[q] for q in sets.temporal - sets.full))
        return SyncCode(qual_bits(sets.full), full,
                        tuple(q * 4 + f for q in full for f in (0, 1)),
                        tuple(q * 4 + f for q in full for f in range(4)) +
                        tuple(q * 4 + TEMP for q in temporal),
                        qual_bits(sets.temporal), tuple(sorted(QIDX[q] for q in sets.temporal)))


def _meets(d: Cover, c: Threads) -> bool:
    if c.task is None:
        return any(d.values())
    return ((d.get(c.task, 0) | d.get(None, 0)) & c.mask) != 0


def passes(terms: tuple[int, int | None, int | None, int | None], c: int) -> bool:
    """Whether collective mask c passes a check given as `Record.terms`."""
    meets, subset, cover, special = terms
    if c & meets:
        return True
    if subset is not None and subset & ~c == 0:
        return True
    if cover is not None:
        rest = c & ~cover
        return rest == 0 or rest == special
    return False


def _grow(m: dict[int, Cover], qvs: tuple[int, ...], c: Threads) -> None:
    """C holds every pair of `qvs` in the copied map m (its inner maps are copied on write)."""
    task, mask = c.task, c.mask
    for qv in qvs:
        d = m.get(qv)
        m[qv] = {task: mask} if d is None else {**d, task: d.get(task, 0) | mask}


class Cov:
    """A record's coverage map and the augments applied to it (`Record.augmented`), never
    changed once made: a rule that grows coverage moves the record to another `Cov`, memoised
    on this one. Records made between two syncs start from one root (`Covs`) and meet the same
    syncs, so they share their `Cov`s and each augment, witness test and join is computed once
    per `Cov`, not once per record (issue 20). Memo keys hold `id(SyncCode)`: the roots belong
    to one machine run, whose codes live as long as it does."""

    __slots__ = ("m", "applied", "aug", "wit", "joins", "tasks")

    def __init__(self, m: dict[int, Cover], applied: frozenset[tuple[int | None, int, int]]
                 ) -> None:
        self.m = m  # (qual-tl, flag) -> Cover; read only
        self.applied = applied  # augment keys already in the map (augment_key)
        self.aug: dict[tuple[int | None, int, int], Cov] | None = None
        self.wit: dict[tuple[int | None, int, int, bool], bool] | None = None
        self.joins: dict[tuple[int | None, int, bool, tuple[int, ...]],
                         tuple[Cov, list[tuple[int, int | None]]]] | None = None
        self.tasks: set[int | None] | None = None  # see `reaches`

    def augmented(self, c: Threads, code: SyncCode, key: tuple[int | None, int, int]) -> "Cov":
        """r.S ∪= A_F(C, τ2) (SEM-5.2)."""
        memo = self.aug
        if memo is None:
            memo = self.aug = {}
        new = memo.get(key)
        if new is None:
            m = dict(self.m)
            _grow(m, code.augment_qvs, c)
            new = memo[key] = Cov(m, self.applied | {key})
        return new

    def meets_witness(self, c: Threads, code: SyncCode, ordering: bool) -> bool:
        """The coverage part of SEM-5.1: some issue/full coverage on τ1.F meets C (ordering:
        any flag on τ1.T, DIAL-6)."""
        key = (c.task, c.mask, id(code), ordering)
        memo = self.wit
        if memo is None:
            memo = self.wit = {}
        got = memo.get(key)
        if got is None:
            m = self.m
            got = any(_meets(m[qv], c) for qv in code.witness_qvs if m.get(qv)) or \
                (ordering and any(_meets(m[q * 4 + f], c) for q in code.order_quals
                                  for f in (0, 1, TEMP) if m.get(q * 4 + f)))
            memo[key] = got
        return got

    def joined(self, c: Threads, ordering: bool, own: tuple[int, ...]
               ) -> "tuple[Cov, list[tuple[int, int | None]]]":
        """JoinThreads(C)'s coverage part (SEM-1.7): every (qual-tl, flag) held by a thread of
        C is held by all of C, then C gets the `own` pairs (the record's initial part, when C
        meets its threads); with the index keys of the witnessing pairs among the first (the
        list is shared: callers copy before adding)."""
        if not own and c.task is not None and not self.reaches(c.task):
            return self, []
        key = (c.task, c.mask, ordering, own)
        memo = self.joins
        if memo is None:
            memo = self.joins = {}
        got = memo.get(key, False)
        if got is None:
            return self, []  # memoised as None: no self-reference, no cycle
        if got is False:
            m, task, mask = dict(self.m), c.task, c.mask
            keys = []
            changed = False
            for qv, d in self.m.items():
                if _meets(d, c):
                    held = d.get(None, 0) | (d.get(task, 0) if task is not None else 0)
                    if held & mask == mask:
                        continue  # all of C holds it already (a 𝔾-wide atom flag): unchanged
                    m[qv] = {**d, task: d.get(task, 0) | mask}
                    changed = True
                    if witness_flag(ordering, qv):
                        keys.append((qv >> 2, task))
            if not changed and not own:
                memo[key] = None  # nothing changes: no new map (Choice M15)
                return self, keys
            _grow(m, own, c)
            got = memo[key] = (Cov(m, self.applied), keys)
        return got

    def reaches(self, task: int) -> bool:
        """Whether a join of threads of `task` may change this map: some entry names threads
        of that task, or some 𝔾-wide entry is held by only some threads (one held by all,
        an atomic access's atom flag, holds for every collective already). Each task's end
        joins every record an atomic access made in earlier tasks (Choice M15)."""
        tasks = self.tasks
        if tasks is None:
            tasks = self.tasks = {t for d in self.m.values() for t, mask in d.items()
                                  if mask and not (t is None and mask == ALL)}
        return task in tasks or None in tasks


class Covs:
    """One machine run's root `Cov`s: the empty map, and per set of atomic qual-tls the map
    an atomic access starts with (SEM-4.4)."""

    def __init__(self) -> None:
        self.empty = Cov({}, frozenset())
        self.atomic: dict[frozenset[QualTL], Cov] = {}

    def start(self, atomic_quals: frozenset[QualTL]) -> Cov:
        if not atomic_quals:
            return self.empty
        cov = self.atomic.get(atomic_quals)
        if cov is None:
            cov = self.atomic[atomic_quals] = Cov(
                {QIDX[q] * 4 + FIDX[Flag.atom]: {None: ALL} for q in atomic_quals}, frozenset())
        return cov


def intersect(a: Threads, b: Threads) -> Threads | None:
    if a.task is None:
        return b if b.task is not None else a
    if b.task is None:
        return a
    if a.task != b.task:
        return None
    common = a.mask & b.mask
    return Threads(a.task, common) if common else None


def augment_key(c: Threads, code: SyncCode) -> tuple[int | None, int, int]:
    """What `Cov.applied` remembers of an augment A_F(C, τ2) (SEM-5.2)."""
    return (c.task, c.mask, id(code))
