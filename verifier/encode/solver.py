"""The only place a Z3 solver is created, checked, or read (style.md §2-3).

`unknown` is a verdict, never a crash and never a pass. Every query is seeded and bounded by
the same `Budget`; results are cached by the SMT-LIB2 text of the query plus the solver version.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum

import z3

from verifier.collectives.symbolic import interrupt_all, run_check
from verifier.encode.smtlib import canonical_text, query_text, text_hash


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
    text: str = field(default="", repr=False, compare=False)  # the SMT-LIB2 query; not cached


SOLVER_NAME = f"z3-{z3.get_version_string()}"
SMALL_ENOUGH = 64  # sizes a replay handles quickly: no search for a smaller model
ABSTRACTION_TIMEOUT_MS = 2_000  # the linear abstraction is a quick first try, not the verdict
_CACHE: dict[str, Outcome] = {}


def stop_checks_on_interrupt() -> Callable[[], None]:
    """Leave SIGINT to Python (z3's own handler would swallow it and end the check as
    `unknown`) and return the function that stops every running check (CLI-4)."""
    z3.set_param("ctrl_c", False)
    return interrupt_all


def _solver(budget: Budget) -> z3.Solver:
    s = z3.Solver(ctx=budget.ctx)
    s.set(timeout=budget.timeout_ms, random_seed=budget.seed)
    if budget.rlimit:
        s.set(rlimit=budget.rlimit)
    return s


def query_hash(constraints: list[z3.BoolRef], budget: Budget) -> str:
    return text_hash(canonical_text(query_text(constraints)), SOLVER_NAME)


def check(constraints: list[z3.BoolRef], names: dict[str, z3.ArithRef], budget: Budget,
          small_bounds: tuple[z3.ArithRef, ...] = (), exact: bool = True,
          timeout_ms: int | None = None) -> Outcome:
    """`_decide`, with the query hash and SMT-LIB2 text of the canonically named query
    (`canonical_text`) attached. The cache is keyed by the exact text instead: a model's
    values are read back through `names`, which belong to this very query."""
    text = query_text(constraints)
    canonical = canonical_text(text)
    out = _decide(constraints, text_hash(text, SOLVER_NAME), names, budget, small_bounds,
                  exact, timeout_ms)
    return replace(out, query_hash=text_hash(canonical, SOLVER_NAME), text=canonical)


def _decide(constraints: list[z3.BoolRef], digest: str, names: dict[str, z3.ArithRef],
            budget: Budget, small_bounds: tuple[z3.ArithRef, ...] = (), exact: bool = True,
            timeout_ms: int | None = None) -> Outcome:
    """Satisfiability of `constraints` (the negation of an obligation).

    On sat, tries to shrink the model by bounding `small_bounds` (the sizes), so that replays
    on the concrete machine stay cheap; the first bound that stays sat gives the model.
    With `exact=False`, a query with products is decided on its linear abstraction alone:
    unsat is still a proof, sat is only a candidate for the next refinement level.
    `timeout_ms` shortens the budget for a query that has a cheaper fallback.
    """
    if digest in _CACHE:
        return _CACHE[digest]
    abstract = linear_abstraction(constraints)
    if abstract is not None:
        s = _solver(budget)
        s.set(timeout=min(budget.timeout_ms, ABSTRACTION_TIMEOUT_MS))
        s.add(*abstract)
        result = run_check(s)
        if result == z3.unsat:
            out = Outcome(Status.proved, None, "", digest)
            _CACHE[digest] = out
            return out
        if not exact:  # sat or gave up: not a proof here, the next level decides
            return Outcome(Status.candidate, None, "linear abstraction: " + str(result), digest)
    s = _solver(budget)
    if timeout_ms is not None:
        s.set(timeout=min(budget.timeout_ms, timeout_ms))
    s.add(*constraints)
    result = run_check(s)
    if result == z3.unsat:
        out = Outcome(Status.proved, None, "", digest)
    elif result == z3.unknown:
        out = Outcome(Status.unknown, None, s.reason_unknown(), digest)
    else:
        model = s.model()
        largest = max((_int(model.eval(v, model_completion=True)) for v in small_bounds),
                      default=0)
        if largest > SMALL_ENOUGH:
            # a fresh solver per bound: incremental checks (push/pop) after a quantified sat
            # can run far past the timeout and use gigabytes
            for bound in [b for b in (4, 16, 64, 256, 1024, 4096) if b < largest]:
                small = _solver(budget)
                small.set(timeout=min(budget.timeout_ms, timeout_ms or budget.timeout_ms))
                small.add(*constraints, *[z3.And(v >= 0, v <= bound) for v in small_bounds])
                if run_check(small) == z3.sat:
                    model = small.model()
                    break
        values = {}
        for name, term in names.items():
            v = model.eval(term, model_completion=True)
            values[name] = v.as_long() if z3.is_int_value(v) else 0
        out = Outcome(Status.candidate, values, "", digest)
    _CACHE[digest] = out
    return out


def _int(v: z3.ExprRef) -> int:
    return v.as_long() if z3.is_int_value(v) else 0


def linear_abstraction(constraints: list[z3.BoolRef]) -> list[z3.BoolRef] | None:
    """The constraints with every product of non-constant terms replaced by an uninterpreted
    function of its factors (None when there is none). Every model of the original is a model
    of the abstraction, so unsat carries over: a cheap linear-arithmetic-with-congruence try
    before nonlinear arithmetic (closed-form counts of non-rectangular nests, nest_sums.py)."""
    memo: dict[int, z3.ExprRef] = {}
    found = False

    def rebuild(e: z3.ExprRef) -> z3.ExprRef:
        nonlocal found
        key = e.get_id()
        if key in memo:
            return memo[key]
        out = e
        if z3.is_app(e) and e.num_args() > 0:
            kids = [rebuild(k) for k in e.children()]
            if z3.is_mul(e) and sum(not z3.is_int_value(k) for k in kids) >= 2:
                found = True
                consts = [k for k in kids if z3.is_int_value(k)]
                args = sorted((k for k in kids if not z3.is_int_value(k)),
                              key=lambda k: k.get_id())  # products commute: canonical order
                mul = z3.Function(f"mul{len(args)}", *([e.sort()] * (len(args) + 1)))
                out = mul(*args)
                for c in consts:
                    out = c * out
            elif any(k.get_id() != c.get_id() for k, c in zip(kids, e.children())):
                out = e.decl()(*kids)
        memo[key] = out
        return out

    result = [rebuild(c) for c in constraints]
    return result if found else None  # type: ignore[return-value]


def clear_cache() -> None:
    """Forget cached outcomes (benchmarks measure cold proofs)."""
    _CACHE.clear()
