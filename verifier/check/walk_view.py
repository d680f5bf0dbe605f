"""What the per-statement rule modules may use of the walk that owns them.

`static.Analyzer` walks the proc and calls `static_barriers`, `static_calls` and
`barrier_exprs` with itself; those modules see it only through this protocol, so they never
import `static` (no file-level import cycle, architecture.md §1).
"""

from __future__ import annotations

from typing import Any, Protocol

from verifier.check.sites import Context, Element, ProgramModel, Trailing
from verifier.diagnostics import SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import Memory
from verifier.lang.stdlib.timelines import InstrTL, QualTL
from verifier.semantics import rules
from verifier.semantics.rules import AccessKind


class AnalyzerView(Protocol):
    model: ProgramModel
    mems: dict[ir.Sym, Memory]
    alloc_lists: dict[ir.Sym, tuple[ir.Stmt, ...]]
    barrier_decls: dict[ir.Sym, Any]
    barrier_uses: dict[ir.Sym, Any]
    guard_taken: set[ir.Sym]
    live_barriers: list[Any]
    commit_overlaps: list[tuple[Any, tuple[Any, ...]]]
    stack: list[ir.Stmt]
    sync_uses: list[Any]
    trailing_calls: list[ir.Call]
    elem_types: dict[ir.Sym, str]
    commit_group_firsts: dict[ir.Sym, Any]

    def fresh_id(self) -> int: ...

    def defer(self, e: Unsupported) -> None: ...

    def note_use(self, sym: ir.Sym, ctx: Context, idx: tuple[Any, ...], *,
                 awaits: bool = ...) -> None: ...

    def check_control(self, e: ir.Expr) -> None: ...

    def record_access(self, sym: ir.Sym, element: Element, kind: AccessKind, instr_tl: InstrTL,
                      ctx: Context, loc: SrcLoc, sub: int, in_instr: bool,
                      atomic_quals: frozenset[QualTL] = ..., single_thread: bool = ...,
                      callee: str | None = ..., trailing: Trailing | None = ...) -> None: ...

    def add_site(self, sym: ir.Sym, element: Element, kind: AccessKind, qual: rules.QualEntry,
                 conv: bool, ctx: Context, loc: SrcLoc, sub: int,
                 atomic_quals: frozenset[QualTL] = ..., single_thread: bool = ...,
                 out_of_order: bool = ..., trailing: Trailing | None = ...) -> None: ...
