"""What the barrier rules (`barriers`) may use of the `Machine` running them.

The machine calls `barriers.arrive/await_/free_barrier` with itself; `barriers` sees it only
through this protocol, so it never imports `machine` (no file-level import cycle).
"""

from __future__ import annotations

from typing import Protocol

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.semantics import rules
from verifier.semantics.index import RecordIndex
from verifier.semantics.rings import CompletionOrder, RingInfo
from verifier.semantics.records import Cohort, SyncCode
from verifier.semantics.schedules import AwaitLog
from verifier.semantics.state import Finding, Origin
from verifier.semantics.threads import Threads
from verifier.semantics.transactions import TxLedger


class MachineView(Protocol):
    index: RecordIndex
    order: CompletionOrder
    rings: RingInfo
    ledger: TxLedger
    await_log: AwaitLog
    env: dict[ir.Sym, int]
    exact_families: bool

    def report(self, finding: Finding) -> None: ...

    def defer(self, finding: Finding) -> None: ...

    def value(self, e: ir.Expr) -> int: ...

    def storage_access(self, sym: ir.Sym, elem: tuple[int, ...], threads: Threads,
                       loc: SrcLoc, sm80: bool, conv: bool = True,
                       tags: frozenset[tuple[int, tuple[int, ...], int]] = frozenset()
                       ) -> None: ...

    def storage_write(self, sym: ir.Sym, elem: tuple[int, ...], threads: Threads, loc: SrcLoc,
                      entry: rules.QualEntry,
                      tags: frozenset[tuple[int, tuple[int, ...], int]],
                      recycle: bool = False) -> None: ...

    def origin(self, loc: SrcLoc, what: str, threads: Threads) -> Origin: ...

    def sync_code(self, sets: rules.SyncSets) -> SyncCode: ...

    def witnessed_part(self, co: Cohort, threads: Threads, first: SyncCode
                       ) -> Cohort | None: ...
