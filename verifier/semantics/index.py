"""Indexes over visibility records, so that a sync statement only looks at records it could
act on. A pure optimisation of SEM-5.3 / 6.3 / 6.4: every record skipped provably fails the
witness (or pending-tag) condition, and the rules themselves decide on every candidate."""

from __future__ import annotations

import itertools
from collections import defaultdict

from verifier.semantics.records import Record, SyncCode
from verifier.semantics.threads import Threads

_SMALL = 64  # records of up to this many threads are indexed per thread
PRUNE_ENTRIES = 4096  # entries added past those kept before a prune (a prune reads them all)


class RecordIndex:
    def __init__(self) -> None:
        # (q0, task, n): records whose initial part holds thread n; n None: larger thread sets
        self.initial: dict[tuple[int, int | None, int | None], list[Record]] = \
            defaultdict(list)
        # (q0, task) -> n -> the lists of `initial` keyed (q0, task, n): a sync visits the
        # threads that have records, not every thread of its collective
        self.by_thread: dict[tuple[int, int | None], dict[int, list[Record]]] = {}
        # (q, task): records with issue/full coverage on q for threads of that task (None: 𝔾)
        self.granted: dict[tuple[int, int | None], list[Record]] = defaultdict(list)
        self.tagged: dict[tuple[int, tuple[int, ...]], list[Record]] = defaultdict(list)
        self.entries = 0  # list entries added since the last prune
        self.kept = 0  # list entries the last prune kept

    def add(self, rec: Record) -> None:
        t = rec.threads
        if t.task is not None and t.mask.bit_count() <= _SMALL:
            per = self.by_thread.setdefault((rec.q, t.task), {})
            for n in t.ids():
                recs = per.get(n)
                if recs is None:
                    recs = per[n] = self.initial[(rec.q, t.task, n)]
                recs.append(rec)
            self.entries += t.mask.bit_count()
        else:
            self.initial[(rec.q, t.task, None)].append(rec)
            self.entries += 1
        self.note(rec, list(rec.wq))
        for key in rec.pending:
            self.tagged[key].append(rec)
        self.entries += len(rec.pending)

    def note(self, rec: Record, keys: list[tuple[int, int | None]]) -> None:
        """`rec` newly holds issue/full coverage on (qual-tl, task) `keys`."""
        for key in keys:
            self.granted[key].append(rec)
        self.entries += len(keys)

    def tag(self, rec: Record, bar: int, elems: list[tuple[int, ...]]) -> None:
        for elem in elems:
            self.tagged[(bar, elem)].append(rec)
        self.entries += len(elems)

    def witness_candidates(self, threads: Threads, code: SyncCode) -> list[Record]:
        """Every live record a sync of `threads` with τ1 might witness (SEM-5.1), once."""
        lists: list[list[Record]] = []
        for q in code.order_quals or code.full_quals:  # T ⊇ F: ring storage too (DIAL-6)
            if threads.task is None:
                lists += [v for (q0, _), v in self.granted.items() if q0 == q]
                lists += [v for (q0, _, _), v in self.initial.items() if q0 == q]
            else:
                lists += [self.granted.get((q, threads.task), []),
                          self.granted.get((q, None), []),
                          self.initial.get((q, threads.task, None), []),
                          self.initial.get((q, None, None), [])]
                mask = threads.mask
                lists += [recs for n, recs in self.by_thread.get((q, threads.task), {}).items()
                          if mask >> n & 1]
        # once each, in first-listed order (a dict keeps its keys' insertion order)
        once = {id(rec): rec for rec in itertools.chain.from_iterable(lists)}
        return [rec for rec in once.values() if rec.group.alive]

    def tagged_with(self, bar: int, elem: tuple[int, ...]) -> list[Record]:
        recs = [r for r in self.tagged.get((bar, elem), []) if r.group.alive]
        self.tagged[(bar, elem)] = recs
        return recs

    def due(self) -> bool:
        """Enough entries were added since the last prune that pruning costs less than the
        dead entries the syncs would step over (each prune reads every entry)."""
        return self.entries > self.kept + PRUNE_ENTRIES

    def prune(self) -> None:
        """Drop records the histories no longer hold (after a collection, `Group.alive`)."""
        kept = 0
        for table in (self.initial, self.granted, self.tagged):
            for key in list(table):
                live = [r for r in table[key] if r.group.alive]
                if live:
                    table[key][:] = live  # the same list: `by_thread` shares it
                    kept += len(live)
                else:
                    del table[key]
        for key, per in list(self.by_thread.items()):
            for n in [n for n in per if (key[0], key[1], n) not in self.initial]:
                del per[n]
            if not per:
                del self.by_thread[key]
        self.entries, self.kept = 0, kept
