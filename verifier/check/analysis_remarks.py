"""The `analysis` remark of upstream's debug log, from spork-verify's collective analysis (API-6).

Upstream writes `debug/PROC-analysis.py` when it checks a proc: the proc printed with comment
lines above statements stating its collective analysis and, on a failure, the error above the
statement that raised it. Here the same facts come from the static walk (check/static.py):
each scope's thread domain and box, each cuda_threads loop's thread pitch and the thread-index
expression its guard tests, each distributed allocation's dimensions and thread pitch tuple,
and the static error, in upstream's words (`Domain (ω.D) = [ 256]`, `thread_pitch=4;
exo_4thr_m = (threadIdx.x / 4)`, `distributed dims: 2, thread pitch tuple (4, 1)`).
Non-goals: upstream's statement and expression ids (`(s40)`, `(e8)`), its alignment notes
and its machine's VisRecord traces: internal state spork-verify does not have.
"""

from __future__ import annotations

from verifier import collectives
from verifier.check.static import Analyzer, analyze
from verifier.diagnostics import SporkError, SrcLoc
from verifier.lang.ir import ir
from verifier.lang.stdlib.debug_log import get_global_debug_log
from verifier.semantics.access import walk_stmts

KIND = "analysis"


def log_analysis(proc: ir.Proc) -> None:
    """Add the collective analysis of `proc` to `debug/NAME-analysis.py` of the global debug
    log; a no-op (the analysis is not run) when no debug folder is set. Rules: API-6"""
    log = get_global_debug_log()
    if log.get_path() is None:
        return
    seen: list[Analyzer] = []
    error: SporkError | None = None
    try:
        analyze(proc, seen)
    except SporkError as e:
        error = e
    checked = seen[0].proc if seen else proc
    log.log(str(proc.name), KIND, checked, analysis_remarks(seen[0] if seen else None, error),
            "static checks")


def analysis_remarks(an: Analyzer | None, error: SporkError | None
                     ) -> dict[SrcLoc, list[str]]:
    """Comment lines by statement location: what the walk `an` derived, then `error`."""
    out: dict[SrcLoc, list[str]] = {}
    stmts = list(walk_stmts(an.proc.body)) if an is not None else []

    def add(loc: SrcLoc, *lines: str) -> None:
        # an expression's location: above the innermost statement on its line; one on no
        # statement's line (an argument, an assert): above the first statement, so it shows
        at = [s.loc for s in stmts if (s.loc.file, s.loc.line) == (loc.file, loc.line)]
        at = at or [s.loc for s in stmts[:1]]
        out.setdefault(at[-1] if at else loc, []).extend(lines)

    for s, tiling in an.scopes if an is not None else ():
        if isinstance(s, ir.For):
            guard = tiling.guard_of(s.iter)
            if guard is not None:
                add(s.loc, f"thread_pitch={guard.thread_pitch}; {guard.c_name} = {guard.expr} "
                    f"@ {s.loc}")
        body = _body(s)
        if body:
            add(body[0].loc, *box_lines(tiling))
    for s in stmts:
        dist = an.distributions.get(s.name) if an and isinstance(s, ir.Alloc) else None
        if dist is not None:
            add(s.loc, f"distributed dims: {dist.R}, thread pitch tuple {dist.pitches} "
                f"@ {s.loc}")
    if error is not None:
        add(error.loc, *f"{error.loc}: {error.message}".splitlines())
    return out


def box_lines(tiling: collectives.Tiling) -> tuple[str, str]:
    """The thread domain and box of a scope, numbers right-aligned as upstream prints them."""
    def nums(xs: tuple[int, ...]) -> str:
        return "[" + ",".join(f"{x:4d}" for x in xs) + "]"
    return f"Domain (ω.D) = {nums(tiling.domain)}", f"   Box (ω.B) = {nums(tiling.box)}"


def _body(s: ir.Stmt) -> tuple[ir.Stmt, ...]:
    match s:
        case ir.For(body=b) | ir.Warps(body=b) | ir.DeviceFunction(body=b):
            return b
    return ()
