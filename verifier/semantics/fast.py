"""The batched machine: the concrete machine of machine.py, with every sync-free loop nest
(batch.py) checked and recorded at once per buffer (batch_apply.py).

It decides the same question as the reference machine (does the run at these sizes meet an
error?) with the same rules (rules.py, records.py, hazards.py) on an equal visibility state,
but keeps no origins for reports: the first error it meets (or any exception) makes
`run_machine` rerun the reference machine, whose report is the one given. So a run without
errors costs the batched run only, and a run with one costs both, stopping at the error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifier import collectives
from verifier.semantics.batch import Enumerator, NotBatched, region_ok
from verifier.semantics.batch_apply import Diverge, Sig, apply_region, new_record
from verifier.semantics.machine import Ctx, Machine
from verifier.semantics.records import ALL, TEMP, Group, Record
from verifier.semantics.rules import AccessKind
from verifier.semantics.state import Finding
from verifier.semantics.threads import Threads

MIN_ROWS = 64  # a region of fewer loop instances runs statement by statement
RETRY = 15  # a loop found too small (or not batchable) runs statement by statement this many
# times before it is enumerated again (its trip counts may depend on outer iterators)


class RegionRecords:
    """The records one region made, by (signature, collective) and by read set."""

    def __init__(self) -> None:
        self.groups: list[Group] = []
        self.by_key: dict[tuple[int, int], int] = {}
        self.families: dict[tuple[int, int, int], Group] = {}
        self.read_groups: list[tuple[Group, ...]] = []
        self.read_ids: dict[tuple[tuple[int, int], ...], int] = {}


class FastMachine(Machine):
    collectives = collectives
    exact_families = False  # a family split that changes no record is skipped (Machine)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cols: list[Threads] = []
        self.col_ids: dict[Threads, int] = {}
        self.sigs: list[Sig] = []
        self.sig_ids: dict[Any, int] = {}
        self.pair_ok: dict[tuple[int, ...], bool] = {}
        self.prototypes: dict[tuple[int, int], Record] = {}
        self.regions: dict[int, bool] = {}
        self.unbatched: dict[int, int] = {}  # loop -> visits left before enumerating again
        self.region = RegionRecords()
        self._col_arrays: tuple[np.ndarray, np.ndarray] | None = None
        self.col_tables: dict[Any, np.ndarray] = {}  # Enumerator.cols' memo, per context
        self.batched = 0  # regions run batched (tests read it)

    def report(self, finding: Finding) -> None:
        raise Diverge(finding.message)

    # ------------------------------------------------------------ regions

    def loop(self, s: Any, ctx: Ctx) -> None:
        ok = self.regions.get(id(s))
        if ok is None:
            ok = self.regions[id(s)] = region_ok(s)
        skip = self.unbatched.get(id(s), 0)
        if ok and skip:  # this loop was not batched last time: enumerate it again later
            self.unbatched[id(s)] = skip - 1
        elif ok:
            try:
                walk = Enumerator(self, ctx)
                walk.run(s)
                if walk.rows_seen >= MIN_ROWS:
                    self.region = RegionRecords()
                    apply_region(self, walk.sites)
                    self.batched += 1
                    return
            except NotBatched:
                pass
            self.unbatched[id(s)] = RETRY
        super().loop(s, ctx)

    # ------------------------------------------------------------ ids

    def col_id(self, threads: Threads) -> int:
        k = self.col_ids.get(threads)
        if k is None:
            k = self.col_ids[threads] = len(self.cols)
            self.cols.append(threads)
            self._col_arrays = None
        return k

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._col_arrays is None:
            single = [t.mask.bit_length() - 1 if t.task is not None and t.mask > 0 and
                      t.mask & (t.mask - 1) == 0 else -1 for t in self.cols]
            tasks = [-1 if t.task is None else t.task for t in self.cols]
            self._col_arrays = (np.asarray(single, dtype=np.int64),
                                np.asarray(tasks, dtype=np.int64))
        return self._col_arrays

    @property
    def col_thread(self) -> np.ndarray:
        return self._arrays()[0]

    @property
    def col_task(self) -> np.ndarray:
        return self._arrays()[1]

    def sig_id(self, sig: Sig) -> int:
        k = self.sig_ids.get(sig.key)
        if k is None:
            k = self.sig_ids[sig.key] = len(self.sigs)
            self.sigs.append(sig)
        return k

    @property
    def sig_kind(self) -> np.ndarray:
        return np.asarray([0 if s.kind is AccessKind.read else 1 for s in self.sigs],
                          dtype=np.int64)

    # ------------------------------------------------------------ records

    def prototype(self, s: int, c: int) -> Record:
        """The record access (s, c) makes, as made (for checks inside its region)."""
        rec = self.prototypes.get((s, c))
        if rec is None:
            sig, t = self.sigs[s], self.cols[c]
            rec = self.prototypes[(s, c)] = Record(
                t, sig.q, sig.flags0, not sig.conv and t.task is not None, self.covs.empty,
                set(), None, 0, Group())
        return rec

    def region_record(self, s: int, c: int) -> int:
        """The group of the record access (s, c) makes in the current region (made once)."""
        k = self.region.by_key.get((s, c))
        if k is None:
            sig, t = self.sigs[s], self.cols[c]
            rec = new_record(self, sig, t, not sig.conv and t.task is not None)
            k = self.region.by_key[(s, c)] = len(self.region.groups)
            self.region.groups.append(rec.group)
        return k

    def read_set(self, pairs: tuple[tuple[int, int], ...]) -> int:
        """The read records of the (signature, collective) pairs on one element: per-thread
        families merged per signature and task (SEM-4.4), the others one record each."""
        k = self.region.read_ids.get(pairs)
        if k is not None:
            return k
        groups: list[Group] = []
        families: dict[tuple[int, int], int] = {}
        for s, c in pairs:
            t, sig = self.cols[c], self.sigs[s]
            if t.task is not None and (not sig.conv or t.mask & (t.mask - 1) == 0):
                families[(s, t.task)] = families.get((s, t.task), 0) | t.mask
            else:
                groups.append(self.region.groups[self.region_record(s, c)])
        for (s, task), mask in families.items():
            g = self.region.families.get((s, task, mask))
            if g is None:
                g = new_record(self, self.sigs[s], Threads(task, mask), True).group
                self.region.families[(s, task, mask)] = g
            groups.append(g)
        k = self.region.read_ids[pairs] = len(self.region.read_groups)
        self.region.read_groups.append(tuple(groups))
        return k

    # ------------------------------------------------------------ older histories

    def _checked(self, h: int, sig: Sig) -> list[tuple[Record, int]]:
        reads, mutates = self.table.histories[h]
        out = [(r, sig.mflag) for g in mutates for r in g.records]
        if sig.kind is not AccessKind.read:
            out += [(r, TEMP) for g in reads for r in g.records]
        return out

    def history_passing(self, h: int, sig: Sig, task: int,
                        memo: dict[tuple[int, int], int]) -> int:
        """The threads of `task` whose single-thread access `sig` passes history h (`memo`:
        each record's `Record.passing` per flag, for one signature and task: histories share
        most of their records)."""
        mask = ALL
        for r, f in self._checked(h, sig):
            got = memo.get((id(r), f))
            if got is None:
                got = memo[(id(r), f)] = r.passing(task, sig.quals, sig.qbits, f, sig.conv)
            mask &= got
        return mask

    def history_ok_everyone(self, h: int, sig: Sig, threads: Threads) -> bool:
        """SEM-4.5 of an access by 𝔾 (CPU scope) against history h."""
        return all(r.lacking(threads, sig.quals, sig.qbits, f, sig.conv) is None
                   for r, f in self._checked(h, sig))

    def history_terms(self, h: int, sig: Sig, task: int,
                      terms_of: dict[tuple[int, int, int, int], Any]) -> tuple[Any, ...]:
        """The distinct `Record.terms` of the records history h checks an access `sig` of
        `task` against: the access passes iff its collective passes every one (`terms_of`:
        each record's, for the caller's region, which histories share)."""
        got = []
        for r, f in self._checked(h, sig):
            key = (id(r), f, id(sig), task)
            t = terms_of.get(key)
            if t is None:
                t = terms_of[key] = r.terms(task, sig.quals, sig.qbits, f, sig.conv)
            got.append(t)
        return tuple(dict.fromkeys(got))

__all__ = ["FastMachine", "Diverge"]
