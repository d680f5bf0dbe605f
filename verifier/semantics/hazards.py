"""Hazard checks and record creation for one access to a box of elements (SEM-4.4, 4.5, 2.6)
and for the free of an SMEM variable (SEM-4.7), over the shared histories of histories.py.

Findings come out exactly as an element-by-element machine reports them: the elements of the
box in C order, and for each element its mutate records then its read records, each list in
creation order (`Record.seq`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np

from verifier.diagnostics import SrcLoc
from verifier.lang.stdlib.dialects import ENDGAME
from verifier.lang.stdlib.timelines import InstrTL, QualTL
from verifier.semantics import rules
from verifier.semantics.histories import (
    EMPTY, Box, BufInstance, History, HistoryTable, box_slices, distinct, elements_of,
)
from verifier.semantics.records import (
    FIDX, FLAGS_ALL, QIDX, TEMP, Covs, Group, Record, qual_bits,
)
from verifier.semantics.rules import AccessKind, Flag

SLOT = QIDX[QualTL.slot]  # DIAL-6: a ring slot's handoff record needs temp visibility only
from verifier.semantics.state import Finding, Origin
from verifier.semantics.threads import Threads

Check = tuple[Record, int, bool]  # record, flag index, earlier access is a read
_MUTATE_FLAG = {kind: FIDX[Flag.full] if kind is AccessKind.read else
                FIDX[rules.mutate_flag(kind)] for kind in AccessKind}  # SEM-4.5


def _checked(groups: tuple[Group, ...], flag: int, atomic: bool, qbits: int
             ) -> Iterator[tuple[Record, int]]:
    """The records of `groups` an access checks (SEM-4.5) and the flag each needs: `flag`,
    temp for a ring slot's handoff record (DIAL-6); an atomic access skips the records atomic
    to it. The one selection both the pass test and the reports read."""
    for g in groups:
        for r in g.records:
            if not (atomic and r.atomic_bits & qbits):
                yield r, TEMP if r.co.q == SLOT else flag


def _fails(groups: tuple[Group, ...], threads: Threads, quals: tuple[int, ...], qbits: int,
           flag: int, conv: bool, atomic: bool) -> bool:
    """Whether some record of `groups` fails SEM-4.5 for the access."""
    return any(r.co.lacking(threads, quals, qbits, f, conv) is not None
               for r, f in _checked(groups, flag, atomic, qbits))


_FLAG_NAME = {FIDX[f]: f.value for f in Flag}
_ISSUE_ONLY = 1 << FIDX[Flag.issue]
_CUDA2 = (QIDX[QualTL.cuda2],)
DIAL20_HINT = ("wait for the asynchronous access before the end of the ring's scope (an Await "
               "on its commit group or on the mbarrier phase it completes, e.g. the final "
               "Await(cg, cuda_in_order, 0) after a pipelined TMA store)")


class HazardChecks:
    """The access half of the machine (mixed into `Machine`, which provides the rest)."""

    table: HistoryTable
    covs: Covs
    report: Callable[[Finding], None]
    origin: Callable[[SrcLoc, str, Threads], Origin]
    record: Callable[..., None]  # Machine.record: a new record in its cohort (Choice M15)
    collect_all: bool
    arg_syms: frozenset[Any]
    proc: Any  # the ir.Proc run (its dialect words the free hazards)

    def qual_codes(self, entry: rules.QualEntry) -> tuple[tuple[int, ...], int]:
        return tuple(sorted(QIDX[q] for q in entry.extended)), qual_bits(entry.extended)

    def entry(self, buf: BufInstance, instr_tl: InstrTL
              ) -> tuple[rules.QualEntry, tuple[int, ...], int]:
        cached = buf.entries.get(instr_tl)
        if cached is None:
            entry = rules.qual_entry(buf.mem.family, instr_tl, f"{buf.sym.name} @ {buf.mem}")
            cached = buf.entries[instr_tl] = (entry, *self.qual_codes(entry))
        return cached

    def check_and_record(self, buf: BufInstance, box: Box, kind: AccessKind,
                         entry: rules.QualEntry, quals: tuple[int, ...], qbits: int, conv: bool,
                         ooo: bool, threads: Threads, loc: SrcLoc,
                         atomic_quals: frozenset[QualTL],
                         tags: frozenset[tuple[int, tuple[int, ...], int]] = frozenset()) -> None:
        """SEM-4.5 checks against ρ(x, i) for every i in `box`, then SEM-4.4 records (pending
        tags P₀ = `tags`) and the SEM-2.6 lifecycle."""
        view = buf.ids[box_slices(box)]
        uniq, inv = distinct(view)
        histories = self.table.histories
        is_read = kind is AccessKind.read
        atomic = kind is AccessKind.atomic
        mflag = _MUTATE_FLAG[kind]
        origin = self.origin(loc, kind.value, threads)

        def checks(h: History) -> list[Check]:
            reads, mutates = h
            out = [(r, f, False) for r, f in _checked(mutates, mflag, atomic, qbits)]
            if not is_read:
                out += [(r, f, True) for r, f in _checked(reads, TEMP, False, qbits)]
            return out

        def lacking(check: Check) -> Threads | None:
            return check[0].lacking(threads, quals, qbits, check[1], conv)

        failing = []
        for k, h in enumerate(uniq):  # `checks` unbuilt: most accesses pass, and `_fails` stops early
            if h == EMPTY:
                continue
            reads, mutates = histories[h]  # type: ignore[misc]
            if _fails(mutates, threads, quals, qbits, mflag, conv, atomic) or \
                    not is_read and _fails(reads, threads, quals, qbits, TEMP, conv, False):
                failing.append(k)
        if failing:
            extended = ", ".join(sorted(q.name for q in entry.extended))

            def finding(index: tuple[int, ...], check: Check, missing: Threads) -> Finding:
                hk = rules.hazard_kind(kind, check[2]).value
                text = f"{hk} HAZARD @ {buf.sym.name}{list(index)}"
                if buf.handoff is not None:  # DIAL-18: upstream's words for the handoff
                    guard, rank = buf.handoff
                    text = f"use_before_alloc HAZARD @ {buf.sym.name}{list(index)}: its ring " \
                        f"slot is handed over by an Await on {guard}{list(index[:rank])}"
                return Finding(hk, text, buf.sym.name,
                               index, loc, origin, check[0].origin,  # type: ignore[arg-type]
                               lacking=f"{self.lacking_text(missing)} lacks "
                               f"{_FLAG_NAME[check[1]]} visibility on {{{extended}}}")

            self.report_in_order(view.shape, box, inv, uniq, failing, checks, lacking, finding)
        group = Group()
        self.table.groups.append(group)
        cov = self.covs.start(atomic_quals)
        self.record(None if atomic_quals else threads.task, threads, QIDX[entry.q0],
                    _ISSUE_ONLY if ooo else FLAGS_ALL, not conv and threads.task is not None,
                    cov, tags, origin, qual_bits(atomic_quals), group, buf.ordering)
        if is_read:
            new = [self.table.add(histories[h][0] + (group,), histories[h][1]) for h in uniq]
        elif atomic:
            new = [self.table.add((), histories[h][1] + (group,)) for h in uniq]
        else:
            new = [self.table.add((), (group,))]
            view[...] = new[0]
            buf.wrote(new)
            return
        if inv is None:
            view[...] = new[0]
        else:
            view[...] = np.asarray(new, dtype=view.dtype)[inv].reshape(view.shape)
        buf.wrote(new)

    def report_in_order(self, shape: tuple[int, ...], box: Box, inv: np.ndarray | None,
                        uniq: list[int], failing: list[int],
                        checks: Callable[[History], list[Check]],
                        lacking: Callable[[Check], Threads | None],
                        finding: Callable[[tuple[int, ...], Check, Threads], Finding]) -> None:
        """Report the failed checks element by element (C order), each element's checks in
        its history's order; stops once nothing new can be reported."""
        histories = self.table.histories
        ordered: dict[int, list[tuple[Check, Threads]]] = {}
        for k in failing:
            h = histories[uniq[k]]
            by_seq = sorted(checks(((), h[1])), key=lambda c: c[0].seq) + \
                sorted(checks((h[0], ())), key=lambda c: c[0].seq)
            ordered[k] = [(c, m) for c in by_seq if (m := lacking(c)) is not None]
        kinds = {c[2] for fails in ordered.values() for c, _ in fails}
        reported: set[bool] = set()
        for index, k in elements_of(shape, box, inv, failing, uniq):
            for check, missing in ordered[k]:
                self.report(finding(index, check, missing))
                reported.add(check[2])
            if reported == kinds:
                return

    def check_free(self, buf: BufInstance, threads: Threads, loc: SrcLoc,
                   some_thread: bool = False) -> None:
        """SEM-4.7: every element is checked as a write-only mutate with X = {cuda2} by every
        thread of the cluster (non-convergent); with `some_thread` (DIAL-20, a data ring freed
        with its guard) by the cluster as one convergent collective: every earlier access must
        be complete, temporally visible on {cuda2} to some thread of it."""
        if not buf.ids.size:
            return
        view = buf.ids
        uniq, inv = distinct(view)
        histories = self.table.histories
        later = Origin(loc, "free", (), self.arg_syms, threads)
        bits = 1 << _CUDA2[0]

        def checks(h: History) -> list[Check]:
            return [(r, TEMP, False) for g in h[1] for r in g.records] + \
                [(r, TEMP, True) for g in h[0] for r in g.records]

        def lacking(check: Check) -> Threads | None:
            return check[0].lacking(threads, _CUDA2, bits, TEMP, some_thread)

        failing = [k for k, h in enumerate(uniq)
                   if h != EMPTY and any(lacking(c) is not None for c in checks(histories[h]))]
        if not failing:
            return

        def finding(index: tuple[int, ...], check: Check, missing: Threads) -> Finding:
            hk = "WAR" if check[2] else "WAW"
            # an endgame file reads upstream's word for it (DIAL-17); the kind stays WAR/WAW
            at = f"@ free({buf.sym.name}{list(index)})"
            said = f"free_missing_sync HAZARD {at} ({hk})" if self.proc.dialect == ENDGAME \
                else f"{hk} HAZARD {at}"
            if some_thread:  # DIAL-20: no thread of the cluster has seen the access complete
                return Finding(hk, said, buf.sym.name, index, loc, later,
                               check[0].origin,  # type: ignore[arg-type]
                               lacking=f"no thread of {missing.describe()} has temp visibility "
                               "on {cuda2}: the access is not complete at the end of the "
                               "ring's scope", rule="DIAL-20", code="ERR-V04",
                               sync_hint=DIAL20_HINT)
            return Finding(hk, said,
                           buf.sym.name, index, loc, later, check[0].origin,  # type: ignore
                           lacking=f"{self.lacking_text(missing)} lacks temp visibility on "
                           "{cuda2}",
                           sync_hint="a Fence at the scope of the allocation before it is freed")

        box = tuple((0, n) for n in buf.shape)
        self.report_in_order(view.shape, box, inv, uniq, failing, checks, lacking, finding)

    @staticmethod
    def lacking_text(missing: Threads) -> str:
        if missing.task is None:
            return "the CPU"
        ids = missing.ids()
        if len(ids) == 1:
            return f"thread {ids[0]} of task {missing.task}"
        return f"{missing.describe()} (these threads)"
