"""Visibility records (SEM-2.4) and the rules that read and grow them (SEM-4.4..5.3, SEM-1.7).

A record's visibility set S ⊆ 𝔾 × Q × VF is its initial part T × {q0} × F0 plus a coverage
map: for every (qual-tl, flag) pair, the threads holding it, per task (`None`: every task).
Thread sets are bitmasks (threads.py) and qual-tls / flags small integers, so each rule is a
few dictionary and integer operations. `per_thread` records stand for the family
{r_g | g ∈ T} of a non-convergent access (SEM-4.4): members share the coverage map and differ
only in their initial part; a sync that treats members differently splits the family.

Records created by one access instance form a `Group`; histories hold groups, so a family split
is seen by every element whose history holds the group (the members are identical records).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable

from verifier.lang.stdlib.timelines import QualTL
from verifier.semantics.rules import Flag, SyncSets
from verifier.semantics.threads import ALL, Threads

QUALS = tuple(QualTL)
QIDX = {q: i for i, q in enumerate(QUALS)}
FIDX = {Flag.issue: 0, Flag.full: 1, Flag.temp: 2, Flag.atom: 3}
FLAGS_ALL = 0b1111
WITNESS_BITS = 0b0011  # issue, full (SEM-5.1)
TEMP = FIDX[Flag.temp]


def _witness_flag(ordering: bool, qv: int) -> bool:
    """Whether coverage (qual-tl, flag) `qv` lets a sync witness the record: issue or full;
    for an ordering-only record (endgame ring storage, DIAL-6) temp too: ordering is all its
    accesses need, and an mbarrier's arrive/wait order transitively."""
    return qv & 3 < 2 or (ordering and qv & 3 == TEMP)

Cover = dict[int | None, int]  # task (None: every task) -> mask of local threads
Tag = tuple[int, tuple[int, ...], int]  # (barrier instance, element, arrive number)
Pending = dict[tuple[int, tuple[int, ...]], int]  # (barrier, element) -> least arrive number


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

    __slots__ = ("m", "applied", "aug", "wit", "joins")

    def __init__(self, m: dict[int, Cover], applied: frozenset[tuple[int | None, int, int]]
                 ) -> None:
        self.m = m  # (qual-tl, flag) -> Cover; read only
        self.applied = applied  # augment keys already in the map (augment_key)
        self.aug: dict[tuple[int | None, int, int], Cov] | None = None
        self.wit: dict[tuple[int | None, int, int, bool], bool] | None = None
        self.joins: dict[tuple[int | None, int, bool, tuple[int, ...]],
                         tuple[Cov, list[tuple[int, int | None]]]] | None = None

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
        key = (c.task, c.mask, ordering, own)
        memo = self.joins
        if memo is None:
            memo = self.joins = {}
        got = memo.get(key)
        if got is None:
            m, task, mask = dict(self.m), c.task, c.mask
            keys = []
            for qv, d in self.m.items():
                if _meets(d, c):
                    m[qv] = {**d, task: d.get(task, 0) | mask}
                    if _witness_flag(ordering, qv):
                        keys.append((qv >> 2, task))
            _grow(m, own, c)
            got = memo[key] = (Cov(m, self.applied), keys)
        return got


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
    """What `Record.applied` remembers of an augment A_F(C, τ2) (SEM-5.2)."""
    return (c.task, c.mask, id(code))


_SEQ = itertools.count()


class Group:
    """The records one access instance created (one, until a sync splits its family)."""

    __slots__ = ("records", "alive", "serial")

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.alive = True
        self.serial = next(_SEQ)


class Record:
    __slots__ = ("seq", "threads", "q", "qbit", "flags0", "per_thread", "cov", "pending",
                 "origin", "atomic_bits", "group", "wq", "ordering")

    def __init__(self, threads: Threads, q: int, flags0: int, per_thread: bool,
                 cov: "Cov | dict[int, Cover]", pending: "Iterable[Tag] | Pending",
                 origin: object, atomic_bits: int, group: Group,
                 ordering: bool = False) -> None:
        self.ordering = ordering  # DIAL-6: carried by temporal grants too
        self.seq = next(_SEQ)  # creation order = the order a per-element history lists it
        self.threads = threads
        self.q = q
        self.qbit = 1 << q
        self.flags0 = flags0
        self.per_thread = per_thread
        # a map makes a root of its own (tests); the machine passes its runs' roots (Covs)
        self.cov = cov if isinstance(cov, Cov) else Cov(cov, frozenset())
        # P (SEM-2.4) as (barrier, element) -> its least arrive number: an Await retires the
        # record iff some tag on its element has a number <= its bound, i.e. the least does
        self.pending: Pending = dict(pending) if isinstance(pending, dict) else {}
        if not isinstance(pending, dict):
            self.tag(pending)
        self.origin = origin
        self.atomic_bits = atomic_bits
        self.group = group
        # (qual-tl, task) pairs with issue/full coverage: the witness index's keys
        self.wq: set[tuple[int, int | None]] = {
            (qv >> 2, task) for qv, d in self.cov.m.items() if _witness_flag(ordering, qv)
            for task, mask in d.items() if mask}
        group.records.append(self)

    def tag(self, tags: Iterable[Tag]) -> None:
        """P ∪= tags (SEM-6.3)."""
        pending = self.pending
        for bar, elem, number in tags:
            old = pending.get((bar, elem))
            if old is None or number < old:
                pending[(bar, elem)] = number

    def retired_by(self, bar: int, elem: tuple[int, ...], a_max: int) -> bool:
        """Some tag of P on (bar, elem) has an arrive number <= a_max (SEM-6.4)."""
        number = self.pending.get((bar, elem))
        return number is not None and number <= a_max

    # ------------------------------------------------------------ SEM-4.5

    def lacking(self, c: Threads, quals: tuple[int, ...], qbits: int, f: int, conv: bool
                ) -> Threads | None:
        """Vis(conv, C, X, f, r) for every member (SEM-4.5): None when it holds, else the
        threads (of C, or of the family) lacking visibility."""
        cov = self.cov.m
        initial = bool(self.qbit & qbits) and bool(self.flags0 >> f & 1)
        if c.task is None:  # CPU scope (convergent, 𝔾)
            if initial:
                return None
            return None if any(cov.get(q * 4 + f) for q in quals) else c
        got = 0
        for q in quals:
            d = cov.get(q * 4 + f)
            if d:
                got |= d.get(c.task, 0) | d.get(None, 0)
        t = self.threads
        if conv:
            if got & c.mask:
                return None
            if not initial:
                return c
            if not self.per_thread:
                return None if t.meets(c) else c
            if t.task is None:
                return None
            rest = t.mask & ~c.mask if t.task == c.task else t.mask
            return Threads(t.task, rest) if rest else None
        if initial and not self.per_thread:
            if t.task is None:
                got = ALL
            elif t.task == c.task:
                got |= t.mask
        missing = c.mask & ~got
        if not missing:
            return None
        if initial and self.per_thread and t.task == c.task and missing == t.mask \
                and t.mask.bit_count() == 1:
            return None
        return Threads(c.task, missing)

    def passing(self, task: int, quals: tuple[int, ...], qbits: int, f: int, conv: bool) -> int:
        """The local threads n of `task` for which `lacking(Threads(task, 1 << n), quals, qbits,
        f, conv)` is None, as a mask (ALL: every thread): SEM-4.5 for every single-thread
        collective of the task at once (the batched machine, fast.py)."""
        cov = self.cov.m
        got = 0
        for q in quals:
            d = cov.get(q * 4 + f)
            if d:
                got |= d.get(task, 0) | d.get(None, 0)
        if not (self.qbit & qbits and self.flags0 >> f & 1):
            return got
        t = self.threads
        if not self.per_thread:
            return ALL if t.task is None and not conv else \
                got | t.mask if t.task is None or t.task == task else got
        if t.task is None:
            return ALL if conv else got
        single = t.task == task and t.mask & (t.mask - 1) == 0
        if conv and t.mask == 0:
            return ALL
        return got | t.mask if single else got

    def terms(self, task: int, quals: tuple[int, ...], qbits: int, f: int, conv: bool
              ) -> tuple[int, int | None, int | None, int | None]:
        """`lacking(Threads(task, c), quals, qbits, f, conv)` as masks (meets, subset, cover,
        special): it is None iff c meets `meets`, or `subset` ⊆ c, or c ⊆ `cover`, or c minus
        `cover` is exactly `special` (SEM-4.5 for every collective of the task at once)."""
        cov = self.cov.m
        got = 0
        for q in quals:
            d = cov.get(q * 4 + f)
            if d:
                got |= d.get(task, 0) | d.get(None, 0)
        initial = bool(self.qbit & qbits and self.flags0 >> f & 1)
        t = self.threads
        if conv:
            if not initial:
                return got, None, None, None
            if not self.per_thread:
                return (got | t.mask if t.task is None or t.task == task else got), None, None, \
                    None
            if t.task is None or t.mask == 0:
                return got, None, ALL, None
            return got, (t.mask if t.task == task else None), None, None
        if initial and not self.per_thread:
            if t.task is None:
                got = ALL
            elif t.task == task:
                got |= t.mask
        special = t.mask if initial and self.per_thread and t.task == task and \
            t.mask.bit_count() == 1 else None
        return 0, None, got, special

    # ------------------------------------------------------------ SEM-5.1 .. 5.3

    def witnessed(self, c: Threads, code: SyncCode) -> Threads | None:
        """The members a sync of C with τ1 witnesses (SEM-5.1): all, some, or none."""
        if self.cov.meets_witness(c, code, self.ordering):
            return self.threads
        bits = code.order_bits if self.ordering else code.full_bits
        if not self.qbit & bits or not self.flags0 & WITNESS_BITS:
            return None
        if not self.per_thread:
            return self.threads if self.threads.meets(c) else None
        return intersect(self.threads, c)

    def augmented(self, key: tuple[int | None, int, int]) -> bool:
        """This augment is already in the record: applying it again changes nothing, since
        coverage only grows, so a sync may skip the record (and any family split)."""
        return key in self.cov.applied

    def split(self, part: Threads) -> "Record":
        """Detach the members in `part` into a new family of the same group (or self if all)."""
        if part == self.threads or not self.per_thread:
            return self
        self.threads = Threads(self.threads.task, self.threads.mask & ~part.mask)
        return Record(part, self.q, self.flags0, True, self.cov, self.pending,
                      self.origin, self.atomic_bits, self.group, self.ordering)

    def augment(self, c: Threads, code: SyncCode) -> list[tuple[int, int | None]]:
        """r.S ∪= A_F(C, τ2) (SEM-5.2); returns the index keys it newly holds. Idempotent,
        so an augment already applied is skipped."""
        key = augment_key(c, code)
        cov = self.cov
        if key in cov.applied:
            return []
        self.cov = cov.augmented(c, code, key)
        if not c.mask:
            return []
        if self.ordering:
            return self._note([(qv >> 2, c.task) for qv in code.augment_qvs])
        return self._note([(q, c.task) for q in code.full_quals])

    def join(self, c: Threads) -> "tuple[Record | None, list[tuple[int, int | None]]]":
        """JoinThreads(C) (SEM-1.7); returns a split-off family if members differ, and the
        index keys this record newly holds (when none split off)."""
        inside = intersect(self.threads, c) if self.per_thread else \
            (self.threads if self.threads.meets(c) else None)
        joined, keys = self.cov.joined(c, self.ordering, ())
        if inside is None:
            self.cov = joined
            return None, self._note(keys)
        own = tuple(self.q * 4 + f for f in range(4) if self.flags0 >> f & 1)
        mine, _ = self.cov.joined(c, self.ordering, own)
        self.cov = joined
        target = self.split(inside)
        target.cov = mine
        if target is not self:
            target.wq.update(keys)
            if target.flags0 & WITNESS_BITS:
                target.wq.add((target.q, c.task))
            return target, self._note(keys)
        if self.flags0 & WITNESS_BITS:
            keys = keys + [(self.q, c.task)]
        return None, self._note(keys)

    def _note(self, keys: list[tuple[int, int | None]]) -> list[tuple[int, int | None]]:
        new = [k for k in keys if k not in self.wq]
        self.wq.update(new)
        return new
