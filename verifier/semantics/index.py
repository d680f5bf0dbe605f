"""Indexes over cohorts of visibility records (Choice M15), so that a sync statement only looks
at cohorts it could act on. A pure optimisation of SEM-5.3 / 6.3 / 6.4: every cohort skipped
provably fails the witness (or pending-tag) condition, and the rules themselves decide on every
candidate. A cohort is listed once, however many records it holds."""

from __future__ import annotations

import itertools
from collections import defaultdict

from verifier.semantics.records import Cohort, SyncCode
from verifier.semantics.threads import Threads

PRUNE_ENTRIES = 4096  # entries added past those kept before a prune (a prune reads them all)


class RecordIndex:
    def __init__(self) -> None:
        # (q0, task) -> thread mask -> cohorts whose initial part is those threads of the task
        # (task None: 𝔾): a sync visits the distinct masks that meet its collective, few
        # (one per collective that accessed), not every thread
        self.initial: dict[tuple[int, int | None], dict[int, list[Cohort]]] = {}
        # (q, task): cohorts with issue/full coverage on q for threads of that task (None: 𝔾)
        self.granted: dict[tuple[int, int | None], list[Cohort]] = defaultdict(list)
        self.tagged: dict[tuple[int, tuple[int, ...]], list[Cohort]] = defaultdict(list)
        self.entries = 0  # list entries added since the last prune
        self.kept = 0  # list entries the last prune kept

    def add(self, rec: Cohort) -> None:
        t = rec.threads
        per = self.initial.get((rec.q, t.task))
        if per is None:
            per = self.initial[(rec.q, t.task)] = {}
        recs = per.get(t.mask)
        if recs is None:
            per[t.mask] = [rec]
        else:
            recs.append(rec)
        self.note(rec, list(rec.wq))
        for key in rec.pending:
            self.tagged[key].append(rec)
        self.entries += len(rec.pending) + 1

    def note(self, rec: Cohort, keys: list[tuple[int, int | None]]) -> None:
        """Cohort `rec` newly holds issue/full coverage on (qual-tl, task) `keys`."""
        for key in keys:
            self.granted[key].append(rec)
        self.entries += len(keys)

    def tag(self, rec: Cohort, bar: int, elems: list[tuple[int, ...]]) -> None:
        for elem in elems:
            self.tagged[(bar, elem)].append(rec)
        self.entries += len(elems)

    def witness_candidates(self, threads: Threads, code: SyncCode) -> list[Cohort]:
        """Every live cohort a sync of `threads` with τ1 might witness (SEM-5.1), once."""
        lists: list[list[Cohort]] = []
        for q in code.order_quals or code.full_quals:  # T ⊇ F: ring storage too (DIAL-6)
            if threads.task is None:
                lists += [v for (q0, _), v in self.granted.items() if q0 == q]
                lists += [recs for (q0, _), per in self.initial.items() if q0 == q
                          for recs in per.values()]
            else:
                lists += [self.granted.get((q, threads.task), []),
                          self.granted.get((q, None), [])]
                lists += self.initial.get((q, None), {}).values()
                mask = threads.mask
                lists += [recs for m, recs in self.initial.get((q, threads.task), {}).items()
                          if m & mask]
        # once each, in first-listed order (a dict keeps its keys' insertion order)
        once = {id(co): co for co in itertools.chain.from_iterable(lists)}
        return [co for co in once.values() if co.live]

    def tagged_with(self, bar: int, elem: tuple[int, ...]) -> list[Cohort]:
        recs = [r for r in self.tagged.get((bar, elem), []) if r.live]
        self.tagged[(bar, elem)] = recs
        return recs

    def due(self) -> bool:
        """Enough entries were added since the last prune that pruning costs less than the
        dead entries the syncs would step over (each prune reads every entry)."""
        return self.entries > self.kept + PRUNE_ENTRIES

    def prune(self) -> None:
        """Drop cohorts none of whose records the histories hold (after a collection)."""
        kept = 0
        for table in (self.granted, self.tagged, *self.initial.values()):
            for key in list(table):
                live = [r for r in table[key] if r.live]  # type: ignore[attr-defined]
                if live:
                    table[key] = live  # type: ignore[index]
                    kept += len(live)
                else:
                    del table[key]  # type: ignore[attr-defined]
        for key in [k for k, per in self.initial.items() if not per]:
            del self.initial[key]
        self.entries, self.kept = 0, kept
