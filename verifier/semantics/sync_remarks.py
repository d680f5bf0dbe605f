"""The `sync-error` remarks of upstream's debug log, from a finding of the machine (API-6).

Upstream's sync_check, on a hazard, logs the proc with comment lines: the hazard in its words
(`WAW HAZARD @ C[0, 0, 0]`) above the failing statement and the failing instance's iterator
values (`task_k = 1`) above their loops. These are built from the machine's own finding: the
same facts, spork-verify's printer. Non-goal: upstream's VisRecord dumps (no such state here).
"""

from __future__ import annotations

from typing import Callable, Mapping

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.lang.rewrite.inline import inline_calls
from verifier.lang.stdlib.debug_log import get_global_debug_log
from verifier.semantics.access import walk_stmts
from verifier.semantics.state import Finding


def log_sync_error(proc: ir.Proc, sizes: Mapping[str, int], finding: Finding) -> None:
    """Log `debug/PROC-SIZES-sync-error.py` (sizes in argument order, as upstream names it)
    and add the hazard to `debug/PROC-analysis.py` in the global debug log; a no-op when no
    debug folder is set. Rules: API-6"""
    log = get_global_debug_log()
    if log.get_path() is None:
        return
    values = [str(sizes[a.name.name]) for a in proc.args if a.name.name in sizes]
    checked = inline_calls(proc)  # the program the machine ran (CALL-1)
    remarks = sync_error_remarks(checked, finding)
    log.log("-".join([str(proc.name)] + values), "sync-error", checked, remarks)
    log.log(str(proc.name), "analysis", checked, remarks, "sync_check")  # upstream's too


def sync_error_remarks(proc: ir.Proc, f: Finding) -> dict[SrcLoc, list[str]]:
    """Comment lines by statement location for finding `f` of the machine on `proc`."""
    out: dict[SrcLoc, list[str]] = {}
    stmts = list(walk_stmts(proc.body))

    def add(loc: SrcLoc, *lines: str) -> None:
        # an access is located at its expression: the remark goes above its statement, the
        # innermost one on that line
        at = [s.loc for s in stmts if (s.loc.file, s.loc.line) == (loc.file, loc.line)]
        out.setdefault(at[-1] if at else loc, []).extend(lines)

    add(f.loc, f.message, *([f.lacking] if f.lacking else []))
    if f.later is not None:
        _iterators_at_loops(proc.body, f.loc, dict(f.later.iterators), add)
    if f.earlier is not None:
        where = ", ".join(f"{k} = {v}" for k, v in f.earlier.iterators)
        add(f.earlier.loc, f"earlier access of {f.message}: {f.earlier.what} by "
            f"{f.earlier.threads}" + (f" at {where}" if where else ""))
    return out


def _iterators_at_loops(body: tuple[ir.Stmt, ...], target: SrcLoc, values: dict[str, int],
                        add: Callable[..., None]) -> bool:
    """Above each loop enclosing the statement at `target`, `name = value` of its iterator in
    the failing instance; True when `target` is inside `body`."""
    for s in body:
        if (s.loc.file, s.loc.line) == (target.file, target.line):
            return True
        inner: tuple[ir.Stmt, ...] = ()
        match s:
            case ir.If(body=b, orelse=o):
                inner = b + o
            case ir.For(body=b) | ir.DeviceFunction(body=b) | ir.Warps(body=b):
                inner = b
            case _:
                continue
        if _iterators_at_loops(inner, target, values, add):
            if isinstance(s, ir.For) and s.iter.name in values:
                add(s.loc, f"{s.iter.name} = {values[s.iter.name]}")
            return True
    return False
