"""Indexes over live visibility records, so that a sync statement only looks at records it
could act on. A pure optimisation of SEM-5.3 / 6.3 / 6.4: every record skipped provably fails
the witness (or pending-tag) condition."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Iterator

from verifier.lang.timelines import QualTL
from verifier.semantics.rules import WITNESS_FLAGS, SyncSets
from verifier.semantics.state import Record, Threads

_SMALL = 64  # families up to this many threads are indexed per thread


class RecordIndex:
    def __init__(self) -> None:
        self.initial: dict[tuple[QualTL, int | None, int | None], list[Record]] = \
            defaultdict(list)
        self.granted: dict[QualTL, list[Record]] = defaultdict(list)
        self.granted_ids: set[tuple[int, QualTL]] = set()
        self.tagged: dict[tuple[int, tuple[int, ...]], list[Record]] = defaultdict(list)
        self.adds = 0

    def compact(self) -> None:
        """Drop records the histories no longer hold (bounds memory on long traces)."""
        for table in (self.initial, self.granted, self.tagged):
            for key in list(table):
                live = [r for r in table[key] if r.alive]
                if live:
                    table[key] = live
                else:
                    del table[key]
        self.granted_ids = {(id(r), q) for q, recs in self.granted.items() for r in recs}

    def add(self, rec: Record) -> None:
        self.adds += 1
        if self.adds % 100_000 == 0:
            self.compact()
        t = rec.threads
        if t.task is not None and t.local is not None and len(t.local) <= _SMALL:
            for n in t.local:
                self.initial[(rec.q0, t.task, n)].append(rec)
        else:
            self.initial[(rec.q0, t.task, None)].append(rec)
        self.note_grants(rec)
        for bar, elem, _ in rec.pending:
            self.tagged[(bar, elem)].append(rec)

    def note_grants(self, rec: Record) -> None:
        for g in rec.grants:
            if g.flags & WITNESS_FLAGS:
                for q in g.quals:
                    key = (id(rec), q)
                    if key not in self.granted_ids:
                        self.granted_ids.add(key)
                        self.granted[q].append(rec)

    def tag(self, rec: Record, bar: int, elems: Iterable[tuple[int, ...]]) -> None:
        for elem in elems:
            self.tagged[(bar, elem)].append(rec)

    def witness_candidates(self, threads: Threads, first: SyncSets) -> Iterator[Record]:
        """Every live record a sync of `threads` with τ1 might witness (SEM-5.1), once."""
        seen: set[int] = set()
        for q in first.full:
            lists = [self.granted.get(q, [])]
            if threads.task is None:
                lists += [v for (q0, _, _), v in self.initial.items() if q0 == q]
            else:
                lists.append(self.initial.get((q, threads.task, None), []))
                lists.append(self.initial.get((q, None, None), []))
                if threads.local is None:
                    lists += [v for (q0, task, _), v in self.initial.items()
                              if q0 == q and task == threads.task]
                else:
                    lists += [self.initial.get((q, threads.task, n), []) for n in threads.local]
            for recs in lists:
                for rec in recs:
                    if rec.alive and id(rec) not in seen:
                        seen.add(id(rec))
                        yield rec

    def tagged_with(self, bar: int, elem: tuple[int, ...]) -> list[Record]:
        recs = [r for r in self.tagged.get((bar, elem), []) if r.alive]
        self.tagged[(bar, elem)] = recs
        return recs
