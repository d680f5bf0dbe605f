"""Z3 terms for thread collectives: the only module of `verifier.collectives` importing z3.

Reads formulas built through the `Arith` interface; produces Z3 terms (`Z3Arith`) and answers
small satisfiability questions for tiling validation (`find_model`). Terms are built in the
context the caller gives, `find_model` in contexts of its own; the global Z3 context is never
used. Non-goals: obligations of the
semantics encoding (those live in `verifier/encode`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import z3

from verifier.collectives.arith import Arith, check_divisor
from verifier.heap import keep_freed_blocks

_TIMEOUT_MS = 60_000
_CORE_RLIMIT = 1_000_000  # the SMT core's own try before the default solver (find_model)
_MAX_ANSWERS = 4096  # find_model's answers kept by formula text (cleared when full)
_ANSWERS: dict[tuple[tuple[str, ...], str], dict[str, int] | None] = {}
_SHARED: list[Z3Arith] = []  # find_model's first-try context, made on first use


class Z3Arith(Arith):
    """Z3 integer terms in an explicit context; div/mod only by positive constants, where Z3's
    Euclidean `div`/`mod` equal floor semantics. Rules: COLL-7.1, COLL-7.3"""

    def __init__(self, ctx: z3.Context) -> None:
        self.ctx = ctx

    def var(self, name: str) -> z3.ArithRef:
        return z3.Int(name, self.ctx)

    def const(self, value: int) -> z3.ArithRef:
        return z3.IntVal(value, self.ctx)

    def add(self, lhs: z3.ArithRef, rhs: z3.ArithRef) -> z3.ArithRef:
        return lhs + rhs

    def sub(self, lhs: z3.ArithRef, rhs: z3.ArithRef) -> z3.ArithRef:
        return lhs - rhs

    def mul(self, lhs: z3.ArithRef, factor: int) -> z3.ArithRef:
        return lhs * z3.IntVal(factor, self.ctx)

    def floordiv(self, lhs: z3.ArithRef, divisor: int) -> z3.ArithRef:
        check_divisor(divisor)
        return lhs / z3.IntVal(divisor, self.ctx)

    def mod(self, lhs: z3.ArithRef, divisor: int) -> z3.ArithRef:
        check_divisor(divisor)
        return lhs % z3.IntVal(divisor, self.ctx)

    def eq(self, lhs: z3.ArithRef, rhs: z3.ArithRef) -> z3.BoolRef:
        return lhs == rhs

    def lt(self, lhs: z3.ArithRef, rhs: z3.ArithRef) -> z3.BoolRef:
        return lhs < rhs

    def le(self, lhs: z3.ArithRef, rhs: z3.ArithRef) -> z3.BoolRef:
        return lhs <= rhs

    def and_(self, *args: z3.BoolRef) -> z3.BoolRef:
        return z3.And(*args) if args else z3.BoolVal(True, self.ctx)

    def or_(self, *args: z3.BoolRef) -> z3.BoolRef:
        return z3.Or(*args) if args else z3.BoolVal(False, self.ctx)

    def not_(self, arg: z3.BoolRef) -> z3.BoolRef:
        return z3.Not(arg)

    def xor(self, lhs: z3.BoolRef, rhs: z3.BoolRef) -> z3.BoolRef:
        return z3.Xor(lhs, rhs)


def fresh_context() -> z3.Context:
    """A new z3 context, its memory kept in the heap when freed (verifier.heap: the tiling
    checks of the static pass create ~60 of them for a 2x2-cluster GEMM before the first
    query, 0.14 s of page faults; each query's fresh context ~4,000 page faults)."""
    keep_freed_blocks(32 << 20, 64 << 20)
    return z3.Context()


_CHECKING: list[z3.Solver] = []  # solvers inside check() right now (the main thread's)


def run_check(solver: z3.Solver) -> z3.CheckSatResult:
    """`solver.check()`, stoppable by `interrupt_all` while it runs: every check of the
    verifier goes through here, so Ctrl-C can end one in progress (specs/cli.md, CLI-4)."""
    _CHECKING.append(solver)
    try:
        return solver.check()
    finally:
        _CHECKING.pop()


def interrupt_all() -> None:
    """Ask the running checks to stop (z3 allows it from another thread). The list copy holds
    each solver, so none is freed while it is interrupted."""
    for solver in list(_CHECKING):
        try:
            solver.interrupt()
        except Exception:  # noqa: S110 - a check that just ended: nothing to stop
            pass


def new_arith() -> Z3Arith:
    """A `Z3Arith` over a fresh context (one per query family; never the global one)."""
    return Z3Arith(fresh_context())


def find_model(build: Callable[[Z3Arith, dict[str, z3.ArithRef]], z3.BoolRef],
               names: Sequence[str]) -> dict[str, int] | None | str:
    """Check `build(arith, vars)` for satisfiability over integer variables `names`.

    Returns a model (name -> int) if SAT, None if UNSAT, and the string "unknown" (with the
    reason appended) if Z3 cannot decide — never read as either answer. The formula is first
    built in one process-wide context (`_SHARED`: a fresh context costs ~1.5 ms, and a
    2x2-cluster GEMM validates 59 tilings) where the SMT core alone (`SimpleSolver`, no
    preprocessing tactics) tries it with a unit budget of its own: its unsat is the answer,
    whatever else that context holds. Anything else is built again in a fresh context and
    asked of the default solver as before, so models (and the messages built from them) are
    unchanged (specs/verification.md D5). Answers are kept by the formula's text
    (`_ANSWERS`): the tilings of one kernel often give the same formula (19 distinct of those
    59), and a formula's answer is a function of its text. Rules: COLL-6.2
    """
    if not _SHARED:
        _SHARED.append(Z3Arith(fresh_context()))
    shared = _SHARED[0]
    formula = build(shared, {name: shared.var(name) for name in names})
    key = (tuple(names), formula.sexpr())
    if key not in _ANSWERS:
        core = z3.SimpleSolver(ctx=shared.ctx)
        core.set(timeout=_TIMEOUT_MS, random_seed=0, rlimit=_CORE_RLIMIT)
        core.add(formula)
        answer = None if run_check(core) == z3.unsat else _decide(build, names)
        if isinstance(answer, str):  # an unknown may depend on the wall clock: not kept
            return answer
        if len(_ANSWERS) >= _MAX_ANSWERS:
            _ANSWERS.clear()
        _ANSWERS[key] = answer
    kept = _ANSWERS[key]
    return None if kept is None else dict(kept)


def _decide(build: Callable[[Z3Arith, dict[str, z3.ArithRef]], z3.BoolRef],
            names: Sequence[str]) -> dict[str, int] | None | str:
    """The default solver's answer in a fresh context (deterministic models)."""
    arith = new_arith()
    variables = {name: arith.var(name) for name in names}
    solver = z3.Solver(ctx=arith.ctx)
    solver.set(timeout=_TIMEOUT_MS, random_seed=0)
    solver.add(build(arith, variables))
    result = run_check(solver)
    if result == z3.unsat:
        return None
    if result == z3.sat:
        model = solver.model()
        return {name: model.eval(var, model_completion=True).as_long()
                for name, var in variables.items()}
    return "unknown: " + solver.reason_unknown()
