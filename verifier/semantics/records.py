"""Visibility records (SEM-2.4) and the rules that read and grow them (SEM-4.4..5.3, SEM-1.7).

A record's visibility set is its initial part T × {q0} × F0 plus a coverage map (coverage.py).
`per_thread` records stand for the family {r_g | g ∈ T} of a non-convergent access (SEM-4.4):
members share the coverage map and differ only in their initial part; a sync that treats
members differently splits the family.

Records created by one access instance form a `Group`; histories hold groups, so a family split
is seen by every element whose history holds the group (the members are identical records).

Choice M15: records that no sync can tell apart — equal threads, qual-tl, initial flags,
`per_thread`, ordering, coverage map and pending tags — form a `Cohort`, which holds that state
once. Syncs (SEM-5.3, 6.3, 6.4, 1.7) visit cohorts, not records: every rule they apply reads
only that state, so each member would get the same answer and the same change (a family split
splits every member alike). A record keeps what only checks and reports read: its origin,
creation order, atomic qual-tls and group.
"""

from __future__ import annotations

import itertools
from typing import Iterable

from verifier.semantics.coverage import (  # the rules' vocabulary, re-exported
    ALL, FIDX, FLAGS_ALL, QIDX, QUALS, TEMP, WITNESS_BITS, Cov, Cover, Covs, SyncCode,
    augment_key, intersect, passes, qual_bits, witness_flag)
from verifier.semantics.threads import Threads

Tag = tuple[int, tuple[int, ...], int]  # (barrier instance, element, arrive number)
Pending = dict[tuple[int, tuple[int, ...]], int]  # (barrier, element) -> least arrive number

__all__ = ["ALL", "FIDX", "FLAGS_ALL", "QIDX", "QUALS", "TEMP", "WITNESS_BITS", "Cov", "Cover",
           "Covs", "SyncCode", "augment_key", "intersect", "passes", "qual_bits", "Tag",
           "Pending", "pending_of", "Group", "Cohort", "Record"]

_SEQ = itertools.count()


def pending_of(tags: Iterable[Tag]) -> Pending:
    """P (SEM-2.4) of a record made with these tags: the least arrive number per element."""
    pending: Pending = {}
    for bar, elem, number in tags:
        old = pending.get((bar, elem))
        if old is None or number < old:
            pending[(bar, elem)] = number
    return pending


class Group:
    """The records one access instance created (one, until a sync splits its family)."""

    __slots__ = ("records", "alive", "serial")

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.alive = True
        self.serial = next(_SEQ)


class Cohort:
    """The sync-visible state of one or more records (Choice M15); `members` what a split
    needs of each record (origin, atomic qual-tls, group: not the record, which refers to its
    cohort: no cycle keeps a dead record), `live` how many of them are in groups the
    histories still hold (histories.py)."""

    __slots__ = ("threads", "q", "qbit", "flags0", "per_thread", "ordering", "cov", "pending",
                 "wq", "members", "live")

    def __init__(self, threads: Threads, q: int, flags0: int, per_thread: bool, cov: Cov,
                 pending: Pending, ordering: bool) -> None:
        self.ordering = ordering  # DIAL-6: carried by temporal grants too
        self.threads = threads
        self.q = q
        self.qbit = 1 << q
        self.flags0 = flags0
        self.per_thread = per_thread
        self.cov = cov
        # P (SEM-2.4) as (barrier, element) -> its least arrive number: an Await retires the
        # record iff some tag on its element has a number <= its bound, i.e. the least does
        self.pending = pending
        # (qual-tl, task) pairs with issue/full coverage: the witness index's keys
        self.wq: set[tuple[int, int | None]] = {
            (qv >> 2, task) for qv, d in cov.m.items() if witness_flag(ordering, qv)
            for task, mask in d.items() if mask} if cov.m else set()
        self.members: list[tuple[object, int, Group]] = []
        self.live = 0

    def alike(self, threads: Threads, cov: Cov, pending: Pending) -> bool:
        """Whether a record just made with this state can join this cohort: no sync tells
        them apart (the caller has matched q, flags0, per_thread, ordering and the Cov's id)."""
        return self.live > 0 and self.cov is cov and self.threads == threads and \
            self.pending == pending

    def admit(self, rec: "Record") -> None:
        rec.co = self
        self.members.append((rec.origin, rec.atomic_bits, rec.group))
        self.live += 1

    def tag(self, tags: Iterable[Tag]) -> None:
        """P ∪= tags (SEM-6.3)."""
        pending = self.pending
        for key, number in pending_of(tags).items():
            old = pending.get(key)
            if old is None or number < old:
                pending[key] = number

    def retired_by(self, bar: int, elem: tuple[int, ...], a_max: int) -> bool:
        """Some tag of P on (bar, elem) has an arrive number <= a_max (SEM-6.4)."""
        number = self.pending.get((bar, elem))
        return number is not None and number <= a_max

    # ------------------------------------------------------------ SEM-4.5

    def lacking(self, c: Threads, quals: tuple[int, ...], qbits: int, f: int, conv: bool
                ) -> Threads | None:
        """Vis(conv, C, X, f, r) for every member of the family (SEM-4.5): None when it
        holds, else the threads (of C, or of the family) lacking visibility."""
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
        """The members of the family a sync of C with τ1 witnesses (SEM-5.1): all, some, or
        none."""
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

    def split(self, part: Threads) -> "Cohort":
        """Detach the family members in `part` into a new cohort (or self if all): every
        record of this one splits alike, each new record in its record's group (SEM-4.4)."""
        if part == self.threads or not self.per_thread:
            return self
        self.threads = Threads(self.threads.task, self.threads.mask & ~part.mask)
        new = Cohort(part, self.q, self.flags0, True, self.cov, dict(self.pending),
                     self.ordering)
        self.members = [m for m in self.members if m[2].alive]
        for origin, atomic_bits, group in self.members:
            Record.member(new, origin, atomic_bits, group)
        return new

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

    def join(self, c: Threads) -> "tuple[Cohort | None, list[tuple[int, int | None]]]":
        """JoinThreads(C) (SEM-1.7); returns a split-off family if members differ, and the
        index keys this cohort newly holds (when none split off)."""
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


def _shared(name: str) -> property:
    return property(lambda self: getattr(self.co, name), doc=f"The cohort's `{name}`.")


class Record:
    """One access instance's record (SEM-2.4): its own origin and creation order, its sync
    state in `co` (Choice M15). Made alone in a cohort of its own; the machine may then move
    it into an alike cohort (`Cohort.admit`)."""

    __slots__ = ("seq", "origin", "atomic_bits", "group", "co")

    def __init__(self, threads: Threads, q: int, flags0: int, per_thread: bool,
                 cov: "Cov | dict[int, Cover]", pending: "Iterable[Tag] | Pending",
                 origin: object, atomic_bits: int, group: Group,
                 ordering: bool = False) -> None:
        # a map makes a root of its own (tests); the machine passes its runs' roots (Covs)
        co = Cohort(threads, q, flags0, per_thread,
                    cov if isinstance(cov, Cov) else Cov(cov, frozenset()),
                    dict(pending) if isinstance(pending, dict) else pending_of(pending), ordering)
        self._made(co, origin, atomic_bits, group)

    @classmethod
    def member(cls, co: Cohort, origin: object, atomic_bits: int, group: Group) -> "Record":
        """A new record of cohort `co` (a family split, SEM-4.4)."""
        rec = cls.__new__(cls)
        rec._made(co, origin, atomic_bits, group)
        return rec

    def _made(self, co: Cohort, origin: object, atomic_bits: int, group: Group) -> None:
        self.seq = next(_SEQ)  # creation order = the order a per-element history lists it
        self.origin = origin
        self.atomic_bits = atomic_bits
        self.group = group
        co.admit(self)
        group.records.append(self)

    threads = _shared("threads")
    q = _shared("q")
    flags0 = _shared("flags0")
    per_thread = _shared("per_thread")
    ordering = _shared("ordering")
    cov = _shared("cov")
    pending = _shared("pending")

    def lacking(self, c: Threads, quals: tuple[int, ...], qbits: int, f: int, conv: bool
                ) -> Threads | None:
        return self.co.lacking(c, quals, qbits, f, conv)

    def passing(self, task: int, quals: tuple[int, ...], qbits: int, f: int, conv: bool) -> int:
        return self.co.passing(task, quals, qbits, f, conv)

    def terms(self, task: int, quals: tuple[int, ...], qbits: int, f: int, conv: bool
              ) -> tuple[int, int | None, int | None, int | None]:
        return self.co.terms(task, quals, qbits, f, conv)

    # a record on its own (tests): the cohort's rules, answered for this record

    def augmented(self, key: tuple[int | None, int, int]) -> bool:
        return self.co.augmented(key)

    def augment(self, c: Threads, code: SyncCode) -> list[tuple[int, int | None]]:
        return self.co.augment(c, code)

    def join(self, c: Threads) -> "tuple[Record | None, list[tuple[int, int | None]]]":
        split, keys = self.co.join(c)
        return (None if split is None else self.group.records[-1]), keys
