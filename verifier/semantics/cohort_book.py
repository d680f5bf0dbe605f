"""The machine's book of cohorts (Choice M15): the live cohorts per task (for JoinThreads,
SEM-1.7), the open cohort a new record may join, and the witness index (index.py) they are
listed in. Mixed into `Machine`, which sets the fields in its constructor."""

from __future__ import annotations

from typing import Any

from verifier.semantics import index as record_index
from verifier.semantics.index import RecordIndex
from verifier.semantics.records import Cohort, Cov, Group, Record, Tag, pending_of
from verifier.semantics.threads import Threads


class CohortBook:
    by_task: dict[int | None, list[Cohort]]
    task_records: int  # entries of by_task since the last prune (Machine.collect_garbage)
    # per (task key, threads, q, flags0, per_thread, ordering, id(Cov)) the cohort a record
    # made with that state joins if it is still alike (`Cohort.alike`)
    open: dict[tuple[Any, ...], Cohort]
    index: RecordIndex

    def live_cohorts(self, task: int | None = None) -> list[Cohort]:
        """Cohorts a sync of `task`'s threads can touch: those created in that task and those
        granted to every thread; all cohorts when `task` is None (CPU scope, kernel ends).
        Only an access of task ι or an 𝔾-wide grant can put task ι's threads into a record."""
        keys = list(self.by_task) if task is None else [task, None]
        out: list[Cohort] = []
        for key in keys:
            cos = self.by_task.get(key)
            if cos:
                live = [co for co in cos if co.live]
                self.by_task[key] = live
                out += live
        return out

    def add_records(self, task: int | None, records: list[Record]) -> None:
        """New records (each alone in its cohort): a record joins the open cohort of its
        state if that cohort is still alike (Choice M15), else its cohort is indexed."""
        for rec in records:
            co = rec.co
            key = (task, co.threads, co.q, co.flags0, co.per_thread, co.ordering, id(co.cov))
            peer = self.open.get(key)
            if peer is not None and peer.alike(co.threads, co.cov, co.pending):
                peer.admit(rec)
            else:
                self.open_cohort(task, key, co)

    def record(self, task: int | None, threads: Threads, q: int, flags0: int,
               per_thread: bool, cov: Cov, tags: frozenset[Tag], origin: object,
               atomic_bits: int, group: Group, ordering: bool) -> None:
        """`add_records` of `Record(...)` with these fields, with no cohort made for a record
        that joins an open one (most do)."""
        key = (task, threads, q, flags0, per_thread, ordering, id(cov))
        peer = self.open.get(key)
        if peer is not None and peer.alike(threads, cov, pending_of(tags)):
            Record.member(peer, origin, atomic_bits, group)
        else:
            rec = Record(threads, q, flags0, per_thread, cov, tags, origin, atomic_bits, group,
                         ordering)
            self.open_cohort(task, key, rec.co)

    def open_cohort(self, task: int | None, key: tuple[Any, ...], co: Cohort) -> None:
        if len(self.open) > record_index.PRUNE_ENTRIES:
            self.open.clear()  # stale entries only keep dead cohorts from being freed
        self.open[key] = co
        self.add_cohort(task, co)

    def add_cohort(self, task: int | None, co: Cohort) -> None:
        self.by_task.setdefault(task, []).append(co)
        self.task_records += 1
        self.index.add(co)
