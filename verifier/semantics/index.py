"""Indexes over visibility records, so that a sync statement only looks at records it could
act on. A pure optimisation of SEM-5.3 / 6.3 / 6.4: every record skipped provably fails the
witness (or pending-tag) condition, and the rules themselves decide on every candidate."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterator

from verifier.semantics.records import Record, SyncCode
from verifier.semantics.threads import Threads

_SMALL = 64  # records of up to this many threads are indexed per thread


class RecordIndex:
    def __init__(self) -> None:
        # (q0, task, n): records whose initial part holds thread n; n None: larger thread sets
        self.initial: dict[tuple[int, int | None, int | None], list[Record]] = \
            defaultdict(list)
        # (q, task): records with issue/full coverage on q for threads of that task (None: 𝔾)
        self.granted: dict[tuple[int, int | None], list[Record]] = defaultdict(list)
        self.tagged: dict[tuple[int, tuple[int, ...]], list[Record]] = defaultdict(list)

    def add(self, rec: Record) -> None:
        t = rec.threads
        if t.task is not None and t.mask.bit_count() <= _SMALL:
            for n in t.ids():
                self.initial[(rec.q, t.task, n)].append(rec)
        else:
            self.initial[(rec.q, t.task, None)].append(rec)
        self.note(rec, list(rec.wq))
        for bar, elem, _ in rec.pending:
            self.tagged[(bar, elem)].append(rec)

    def note(self, rec: Record, keys: list[tuple[int, int | None]]) -> None:
        """`rec` newly holds issue/full coverage on (qual-tl, task) `keys`."""
        for key in keys:
            self.granted[key].append(rec)

    def tag(self, rec: Record, bar: int, elems: list[tuple[int, ...]]) -> None:
        for elem in elems:
            self.tagged[(bar, elem)].append(rec)

    def witness_candidates(self, threads: Threads, code: SyncCode) -> list[Record]:
        """Every live record a sync of `threads` with τ1 might witness (SEM-5.1), once."""
        seen: set[int] = set()
        out: list[Record] = []
        for q in code.order_quals or code.full_quals:  # T ⊇ F: ring storage too (DIAL-6)
            if threads.task is None:
                lists = [v for (q0, _), v in self.granted.items() if q0 == q]
                lists += [v for (q0, _, _), v in self.initial.items() if q0 == q]
            else:
                lists = [self.granted.get((q, threads.task), []),
                         self.granted.get((q, None), [])]
                lists.append(self.initial.get((q, threads.task, None), []))
                lists.append(self.initial.get((q, None, None), []))
                lists += [self.initial.get((q, threads.task, n), []) for n in threads.ids()]
            for recs in lists:
                for rec in recs:
                    if rec.group.alive and id(rec) not in seen:
                        seen.add(id(rec))
                        out.append(rec)
        return out

    def tagged_with(self, bar: int, elem: tuple[int, ...]) -> list[Record]:
        recs = [r for r in self.tagged.get((bar, elem), []) if r.group.alive]
        self.tagged[(bar, elem)] = recs
        return recs

    def prune(self) -> None:
        """Drop records the histories no longer hold (after a collection, `Group.alive`)."""
        for table in (self.initial, self.granted, self.tagged):
            for key in list(table):
                live = [r for r in table[key] if r.group.alive]
                if live:
                    table[key] = live
                else:
                    del table[key]
