"""Vacuity: a proc whose proof would hold for no reason is `vacuous`, never `proved`.

Reads the obligation builder of one proc (sizes, argument-type constraints, asserts, sites);
decides with Z3 (through `solver.check`) whether (VAC-1) the asserts with the argument types
admit any size at all, and (VAC-2) any statement instance — an access that is not a free, an
Arrive or an Await — executes for some size they admit. Produces a located `Finding` or None.
Non-goals: which sizes a proof is interesting for; a proc with one executing access is checked
in full, however small its instance space.
"""

from __future__ import annotations

import z3

from verifier.diagnostics import SrcLoc
from verifier.results import Finding, FindingKind
from verifier.encode.instances import Instance
from verifier.encode.obligations import ObligationBuilder
from verifier.encode.solver import DEFAULT_RLIMIT, Budget, Status, prepare, solve

CODE = "ERR-V12"


class Undecided(Exception):
    """Z3 answered unknown: vacuity cannot be decided, so no verdict can rest on it."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(f"cannot decide whether {what}: the solver returned unknown ({reason})")


def _satisfiable(constraints: list[z3.BoolRef], budget: Budget, what: str) -> bool:
    answer = solve(prepare(constraints, budget.rlimit), budget.wall_s)
    if answer.status is Status.unknown:
        raise Undecided(what, answer.reason)
    return answer.status is Status.candidate


def _with_assumed(assumed: dict[str, int]) -> str:
    """` with --assume n=0`: what a vacuity message adds under assumed sizes (CLI-11)."""
    given = ", ".join(f"{k}={v}" for k, v in assumed.items())
    return f" with --assume {given}" if given else ""


def _asserts_finding(builder: ObligationBuilder, budget: Budget, assumed: dict[str, int]
                     ) -> Finding | None:
    """VAC-1: the first assert at which the argument types, the assumed values (CLI-11: as if
    the proc began with `assert NAME == VALUE`) and the asserts so far admit no size (Rules:
    LANG-2.5, SEM-1.1, VAC-1)."""
    proc = builder.model.proc
    base = builder.base
    if _satisfiable(base, budget, "the asserts admit any size"):
        return None
    n_types = len(builder.enc.assumptions) - len(proc.preds)  # one assumption per assert
    types = base[:n_types]
    fixed = base[len(builder.enc.assumptions):]  # sizes pinned: assumed, or a fixed-size run
    with_given = _with_assumed(assumed)
    if not _satisfiable(types + fixed, budget, "the fixed sizes fit the argument types"):
        return Finding(FindingKind.vacuous, f"vacuous: the sizes given are outside the "
                       f"argument types of proc {proc.name} (a size is at least 0)", None,
                       proc.loc, rule="LANG-2.5", code=CODE)
    for k, pred in enumerate(proc.preds):
        if not _satisfiable(types + fixed + base[n_types:n_types + k + 1], budget,
                            "the asserts admit any size"):
            where = "together with the argument types (size >= 0)" if k == 0 else \
                "together with the asserts before it and the argument types (size >= 0)"
            return Finding(FindingKind.vacuous,
                           f"vacuous: this assert admits no size {where}{with_given}; proc "
                           f"{proc.name} has nothing to verify, so it is not proved", None,
                           pred.loc, rule="LANG-2.5", code=CODE)
    return Finding(FindingKind.vacuous, f"vacuous: the asserts of proc {proc.name} admit no "
                   f"size{with_given}", None, proc.loc, rule="LANG-2.5", code=CODE)


def _empty_loop(builder: ObligationBuilder, inst: Instance, budget: Budget) -> SrcLoc | None:
    """The outermost loop of an instance that has no iteration for any size allowed."""
    enc = builder.enc
    env: dict = {}
    conj: list[z3.BoolRef] = []
    for lp in inst.ctx.loops:
        var = inst.iters[lp.sym]
        conj += [var >= enc.value(lp.lo, env), var < enc.value(lp.hi, env)]
        env[lp.sym] = var
        if not _satisfiable(builder.base + conj, budget, "a loop runs"):
            return lp.loc
    return None


def _instance_finding(builder: ObligationBuilder, budget: Budget, assumed: dict[str, int]
                      ) -> Finding | None:
    """VAC-2: no access, Arrive or Await has an instance for any size the asserts admit
    (Rules: SEM-1.1, SEM-1.8)."""
    model = builder.model
    sites = [(s.ctx, s.loc) for s in model.accesses if not s.is_free] + \
        [(s.ctx, s.loc) for s in model.arrives] + [(s.ctx, s.loc) for s in model.awaits]
    empty_at: SrcLoc | None = None
    for ctx, _ in sites:
        inst = builder.enc.instance(ctx, "v")
        if _satisfiable(builder.base + [inst.valid], budget, "a statement instance executes"):
            return None
        empty_at = empty_at or _empty_loop(builder, inst, budget)
    proc = model.proc
    if not sites:
        return Finding(FindingKind.vacuous, f"vacuous: proc {proc.name} accesses no memory and "
                       "has no barrier: there is nothing to verify, so it is not proved", None,
                       proc.loc, rule="SEM-1.1", code=CODE)
    where = f"; e.g. the loop at line {empty_at.line} has no iteration" if empty_at else ""
    with_given = _with_assumed(assumed)
    return Finding(FindingKind.vacuous, f"vacuous: no statement of proc {proc.name} executes "
                   f"for any size its asserts admit{with_given}{where}: there is nothing to "
                   "verify, so it is not proved", None, empty_at or sites[0][1],
                   rule="SEM-1.1", code=CODE)


def vacuity(builder: ObligationBuilder, assumed: dict[str, int] | None, wall_s: float,
            point: bool = False) -> Finding | None:
    """Why the proc is vacuous (a located finding), or None when there is something to prove.
    Assumed sizes (`--assume`, CLI-11) are asserts placed before the proc's own: values the
    asserts exclude are VAC-1, and VAC-2 is asked under them, as for `assert NAME == VALUE`.
    A `point` run (every size fixed to check one size, as the differential tests do) asks only
    VAC-1: at one size, a proc with no instance agrees with the concrete machine, which then
    runs nothing and finds nothing. Raises `Undecided` when Z3 answers unknown."""
    budget = Budget(rlimit=DEFAULT_RLIMIT, wall_s=wall_s)
    given = {} if point else dict(assumed or {})
    found = _asserts_finding(builder, budget, given)
    if found is None and not point:
        found = _instance_finding(builder, budget, given)
    return found


__all__ = ["CODE", "Undecided", "vacuity"]
