"""The only place a Z3 solver is created, checked, or read (style.md §2-3).

`unknown` is a verdict, never a crash and never a pass. Every query is seeded and bounded by
the same `Budget`; results are cached by the SMT-LIB2 text of the query plus the solver version.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum

import z3


class Status(Enum):
    proved = "proved"  # the negated obligation is unsat
    candidate = "candidate"  # sat: a counterexample to be replayed
    unknown = "unknown"  # timeout or incomplete theory


@dataclass
class Budget:
    timeout_ms: int = 30_000
    rlimit: int = 0
    seed: int = 0
    ctx: z3.Context = field(default_factory=z3.Context)


@dataclass(frozen=True)
class Outcome:
    status: Status
    model: dict[str, int] | None
    reason: str
    query_hash: str


SOLVER_NAME = f"z3-{z3.get_version_string()}"
_CACHE: dict[str, Outcome] = {}


def _solver(budget: Budget) -> z3.Solver:
    s = z3.Solver(ctx=budget.ctx)
    s.set(timeout=budget.timeout_ms, random_seed=budget.seed)
    if budget.rlimit:
        s.set(rlimit=budget.rlimit)
    return s


def query_hash(constraints: list[z3.BoolRef], budget: Budget) -> str:
    s = _solver(budget)
    s.add(*constraints)
    text = s.to_smt2()
    return hashlib.sha256((SOLVER_NAME + "\n" + text).encode()).hexdigest()[:16]


def check(constraints: list[z3.BoolRef], names: dict[str, z3.ArithRef], budget: Budget,
          small_bounds: tuple[z3.ArithRef, ...] = ()) -> Outcome:
    """Satisfiability of `constraints` (the negation of an obligation).

    On sat, tries to shrink the model by bounding `small_bounds` (the sizes), so that replays
    on the concrete machine stay cheap; the first bound that stays sat gives the model.
    """
    digest = query_hash(constraints, budget)
    if digest in _CACHE:
        return _CACHE[digest]
    s = _solver(budget)
    s.add(*constraints)
    result = s.check()
    if result == z3.unsat:
        out = Outcome(Status.proved, None, "", digest)
    elif result == z3.unknown:
        out = Outcome(Status.unknown, None, s.reason_unknown(), digest)
    else:
        model = s.model()
        if small_bounds:
            for bound in (4, 16, 64, 256, 1024, 4096):
                s.push()
                s.add(*[z3.And(v >= 0, v <= bound) for v in small_bounds])
                if s.check() == z3.sat:
                    model = s.model()
                    s.pop()
                    break
                s.pop()
        values = {}
        for name, term in names.items():
            v = model.eval(term, model_completion=True)
            values[name] = v.as_long() if z3.is_int_value(v) else 0
        out = Outcome(Status.candidate, values, "", digest)
    _CACHE[digest] = out
    return out


def clear_cache() -> None:
    """Forget cached outcomes (benchmarks measure cold proofs)."""
    _CACHE.clear()
