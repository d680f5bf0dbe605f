"""Where the missing synchronization of a refuted race goes, checked where cheap.

For a race between two statements the smallest candidate is one CTA-level
`Fence(cuda_in_order, cuda_in_order)` placed right after the statement (of their innermost
common block) that holds the earlier access: between that statement's last line and the next
line. An earlier access by an asynchronous instruction needs an Arrive/Await pair instead, and
threads of different tasks cannot be ordered by a Fence; those hints are advice only. A Fence hint
is "checked" only when the proc, rewritten with the Fence inserted into its IR, is verified again
and the obligation of that race is then proved.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from verifier.diagnostics import SporkError, SrcLoc
from verifier.lang.ir import ir
from verifier.lang.stdlib.timelines import InstrTL, SyncTL
from verifier.results import (Finding, FindingKind, ObligationStatus, ProcResult, Related,
                              Verdict)

if TYPE_CHECKING:  # verify imports this module's callers; the options are only annotated
    from verifier.encode.verify import Options

RACES = (FindingKind.RAW, FindingKind.WAR, FindingKind.WAW)
MAX_OBLIGATIONS = 64  # re-verify only fence-only procs this small (cheap, and deterministic:
MAX_CHECKS = 3  # the report must not depend on the machine's speed); at most this many per proc
_BLOCKS = ("body", "orelse")
_THREAD = re.compile(r"task (\d+), thread (\d+)$")


@dataclass(frozen=True)
class Placement:
    """Insert at `index` of the block `path` (a chain of (block field, statement index))."""

    path: tuple[tuple[str | None, int], ...]
    index: int
    after_line: int  # last line of the statement holding the earlier access
    before_line: int | None  # first line of the next statement, None at the end of a block
    col: int  # indentation column of the block
    earlier_stmt: ir.Stmt
    enclosing: tuple[ir.Stmt, ...]  # the statements whose blocks hold the insertion point
    between: tuple[SrcLoc, ...]  # sync statements run between the two accesses (trace order)
    syncs_before: int  # how many of them come before the insertion point

    def scope(self) -> str:
        """Which collective runs the inserted statement, in words."""
        narrowing = [s for s in self.enclosing if isinstance(s, ir.Warps) or
                     isinstance(s, ir.For) and isinstance(s.mode, ir.CudaThreads)]
        if narrowing and isinstance(narrowing[-1], ir.Warps):
            return f"inside the CudaWarps block of line {narrowing[-1].loc.line}"
        if narrowing:
            return f"inside the cuda_threads loop of line {narrowing[-1].loc.line}"
        if any(isinstance(s, ir.For) and isinstance(s.mode, ir.CudaTasks)
               for s in self.enclosing):
            return "at task level (CTA scope: every thread of the CTA runs it)"
        return "at the level of the enclosing block"


def _locs(node: object) -> list[SrcLoc]:
    """Every source position in a statement's subtree."""
    found: list[SrcLoc] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, SrcLoc):
            found.append(item)
        elif isinstance(item, tuple):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return found


@dataclass(frozen=True)
class _Step:
    index: int
    stmt: ir.Stmt
    into: str | None  # the block field of `stmt` holding the next step; None at the leaf


def _path_to(body: tuple[ir.Stmt, ...], loc: SrcLoc) -> list[_Step] | None:
    """The statements from the proc body down to the innermost one holding `loc`."""
    for i, s in enumerate(body):
        if loc not in _locs(s):
            continue
        for field in _BLOCKS:
            inner = getattr(s, field, None)
            if isinstance(inner, tuple):
                rest = _path_to(inner, loc)
                if rest is not None:
                    return [_Step(i, s, field), *rest]
        return [_Step(i, s, None)]
    return None


def place(proc: ir.Proc, earlier: SrcLoc, later: SrcLoc) -> Placement | None:
    """Right after the earlier access's statement in the innermost block holding both, or
    None when one access is inside the other's statement or they are in different branches."""
    pe, pl = _path_to(proc.body, earlier), _path_to(proc.body, later)
    if pe is None or pl is None:
        return None
    k = 0
    while k < min(len(pe), len(pl)) - 1 and pe[k].index == pl[k].index and \
            pe[k].into == pl[k].into:
        k += 1
    if pe[k].index == pl[k].index:
        return None
    block = proc.body
    for step in pe[:k]:
        block = getattr(block[step.index], step.into)
    index = pe[k].index + 1
    lo, hi = pe[k].index, pl[k].index
    middle = block[lo + 1:hi] if lo < hi else block[lo + 1:] + block[:hi]  # loop-carried
    # trace order: what follows the earlier access inside its statements (innermost first),
    # the statements between, then what precedes the later access inside its statements
    after = [_syncs(getattr(pe[j - 1].stmt, pe[j - 1].into)[pe[j].index + 1:])
             for j in range(len(pe) - 1, k, -1)]
    before = [_syncs(getattr(pl[j - 1].stmt, pl[j - 1].into)[:pl[j].index])
              for j in range(k + 1, len(pl))]
    between = [loc for group in (*after, _syncs(middle), *before) for loc in group]
    return Placement(tuple((step.into, step.index) for step in pe[:k]), index,
                     max(loc.line for loc in _locs(pe[k].stmt)),
                     block[index].loc.line if index < len(block) else None,
                     pe[k].stmt.loc.col, pe[-1].stmt, tuple(step.stmt for step in pe[:k]),
                     tuple(between), sum(map(len, after)))


def _has_barriers(block: tuple[ir.Stmt, ...]) -> bool:
    """Whether a block uses Arrive/Await (their proofs, hence re-checks, are the costly ones)."""
    return any(isinstance(s, (ir.Arrive, ir.Await)) or
               any(_has_barriers(getattr(s, f)) for f in _BLOCKS
                   if isinstance(getattr(s, f, None), tuple)) for s in block)


def _syncs(block: tuple[ir.Stmt, ...]) -> list[SrcLoc]:
    """Positions of the Fence/Arrive/Await statements of a block, in textual order."""
    out: list[SrcLoc] = []
    for s in block:
        if isinstance(s, (ir.Fence, ir.Arrive, ir.Await)):
            out.append(s.loc)
        for field in _BLOCKS:
            inner = getattr(s, field, None)
            if isinstance(inner, tuple):
                out += _syncs(inner)
    return out


def insert_fence(proc: ir.Proc, at: Placement) -> ir.Proc:
    """The proc with `Fence(cuda_in_order, cuda_in_order)` inserted at `at`."""
    loc = SrcLoc(proc.loc.file, at.after_line, at.col)
    fence = ir.Fence(SyncTL.cuda_in_order, SyncTL.cuda_in_order, loc)

    def rebuild(block: tuple[ir.Stmt, ...], path: tuple[tuple[str, int], ...]) \
            -> tuple[ir.Stmt, ...]:
        if not path:
            return block[:at.index] + (fence,) + block[at.index:]
        (field, i), rest = path[0], path[1:]
        inner = rebuild(getattr(block[i], field), rest)
        return block[:i] + (dataclasses.replace(block[i], **{field: inner}),) + block[i + 1:]

    return dataclasses.replace(proc, body=rebuild(proc.body, at.path))


def _threads(f: Finding) -> dict[str, tuple[int, int]]:
    """role -> (task, thread) from the counterexample's thread list, where a single thread."""
    out: dict[str, tuple[int, int]] = {}
    for text in f.counterexample.threads if f.counterexample else ():
        role, _, who = text.partition(":")
        m = _THREAD.search(who.strip())
        if m:
            out[role.strip()] = (int(m[1]), int(m[2]))
    return out


def _in_trace_order(related: tuple[Related, ...], missing: Related,
                    at: Placement) -> tuple[Related, ...]:
    """`missing` among the syncs between, at the insertion point (trace order)."""
    syncs = tuple(r for r in related if r.role == "sync between")
    return (*(r for r in related if r.role != "sync between"), *syncs[:at.syncs_before],
            missing, *syncs[at.syncs_before:])


def _obligation_id(f: Finding, earlier: SrcLoc) -> str:
    return f"{f.kind.value}:{f.variable}@{earlier.line}:{earlier.col}->{f.loc.line}:{f.loc.col}"


def _is_async(stmt: ir.Stmt) -> bool:
    instr_tl = getattr(getattr(stmt, "callee", None), "instr_tl", None)
    return isinstance(stmt, ir.Call) and instr_tl not in (None, InstrTL.cuda_in_order_instr)


def _proves(proc: ir.Proc, at: Placement, ob_id: str, opts: Options | None) -> bool:
    from verifier.encode.verify import verify_proc

    try:
        again = verify_proc(insert_fence(proc, at), opts)
    except SporkError:  # the rewritten program is rejected or unsupported: unchecked
        return False
    return any(o.id == ob_id and o.status is ObligationStatus.proved for o in again.obligations)


def _hint(proc: ir.Proc, result: ProcResult, f: Finding, can_check: bool, barriers: bool,
          opts: Options | None) -> tuple[Finding, bool]:
    """The finding with a placed hint, and whether a re-verification was spent on it."""
    earlier = next((r.loc for r in f.related if r.role == "earlier access"), None)
    if f.kind not in RACES or earlier is None or "free(" in f.message:
        return f, False
    at = place(proc, earlier, f.loc)
    if at is not None:  # the sync statements that ran between and did not order the two
        f = dataclasses.replace(f, related=(*f.related, *(Related(loc, "sync between")
                                                           for loc in at.between)))
    threads = _threads(f)
    if {"earlier", "later"} <= set(threads) and threads["earlier"][0] != threads["later"][0]:
        hint = (f"the two threads are in different tasks ({threads['earlier'][0]} and "
                f"{threads['later'][0]}): no Fence orders them; use distinct elements per task, "
                "a cluster-scope Arrive/Await, or separate kernels")
        return dataclasses.replace(f, hint=hint), False
    if at is None:
        return f, False
    where = (f"between lines {at.after_line} and {at.before_line}" if at.before_line else
             f"after line {at.after_line} (at the end of its block)")
    placed = dataclasses.replace(f, related=_in_trace_order(f.related, Related(
        SrcLoc(f.loc.file, at.before_line or at.after_line, at.col), "missing sync"), at))
    if _is_async(at.earlier_stmt) or barriers:
        return dataclasses.replace(placed, hint=_barrier_advice(at, f, where)), False
    hint = f"insert Fence(cuda_in_order, cuda_in_order) {where}, {at.scope()}"
    ob_id = _obligation_id(f, earlier)
    if not can_check or not any(o.id == ob_id and o.status is ObligationStatus.refuted
                                for o in result.obligations):
        return dataclasses.replace(placed, hint=hint + " (not checked)"), False
    if _proves(proc, at, ob_id, opts):
        hint += " (checked: with it inserted, this obligation is proved)"
    else:
        hint = (f"a Fence(cuda_in_order, cuda_in_order) {where}, {at.scope()}, does not "
                "remove it (checked): the sync must be executed by a collective holding both "
                "threads" + (", e.g. split that cuda_threads loop there and put the Fence "
                             "between the two loops" if "cuda_threads" in at.scope() else ""))
    return dataclasses.replace(placed, hint=hint), True


def _barrier_advice(at: Placement, f: Finding, where: str) -> str:
    """Advice (never checked) where the order must come from an Arrive/Await pair."""
    instr_tl = getattr(getattr(at.earlier_stmt, "callee", None), "instr_tl", None)
    if _is_async(at.earlier_stmt):
        tl = instr_tl.value.removesuffix("_instr")
        # tcgen05 ops complete through tcgen05.commit, awaited with the after_thread_sync
        # fence (BW-3.1, BW-3.3); tcgen05.ld / st through tcgen05.wait (BW-3.2)
        arrive, second = (("tcgen05_commit", "tcgen05_after_thread_sync")
                          if tl.startswith("tcgen05_") else (f"{tl}, 1", "cuda_in_order"))
        if tl in ("tcgen05_ld", "tcgen05_st"):
            return (f"the earlier access is asynchronous ({tl}): Fence({tl}, cuda_in_order) "
                    f"(tcgen05.wait) {where} must complete it, and a thread sync ending in "
                    f"tcgen05_after_thread_sync order it before line {f.loc.line} (not checked)")
        return (f"the earlier access is asynchronous ({tl}): an Arrive({arrive}) >> bar after "
                f"it ({where}) must be awaited, Await(bar, {second}, N), before line "
                f"{f.loc.line}; check that Await's N (how many recent arrives it may skip) and "
                "the barrier index it names (not checked)")
    pairs = [loc.line for loc in at.between]
    if pairs:
        return (f"the sync statements at line{'s' if len(pairs) > 1 else ''} "
                f"{', '.join(map(str, pairs))} run between the two accesses but do not order "
                "them: check the Await's N (lag), the barrier index it names, and that its "
                "Arrive follows the earlier access (not checked)")
    return (f"this proc orders its threads with Arrive/Await, but none runs between the two "
            f"accesses: an Arrive {where} must be awaited before line {f.loc.line} "
            "(not checked)")


def add_sync_hints(proc: ir.Proc, result: ProcResult, opts: Options | None = None
                   ) -> ProcResult:
    """`result` with every refuted race's hint naming the sync and where it goes."""
    if result.verdict is not Verdict.refuted:
        return result
    barriers = _has_barriers(proc.body)
    checks = MAX_CHECKS if len(result.obligations) <= MAX_OBLIGATIONS and not barriers else 0
    findings = []
    for f in result.findings:
        placed, spent = _hint(proc, result, f, checks > 0, barriers, opts)
        checks -= spent
        findings.append(placed)
    return dataclasses.replace(result, findings=tuple(findings))
