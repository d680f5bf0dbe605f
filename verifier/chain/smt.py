"""Z3 reads `presburger` formulas and decides them (CHAIN-4); the only z3 user of the chain.

Every obligation of the chain proof is a quantifier-free formula over integer sizes and
iterators that must be unsatisfiable under the context: `unsat` is proved, `sat` gives a model
(a candidate counterexample, replayed before it is reported), anything else is unknown. Floors
by positive constants are Z3's integer division, which is floor division for a positive divisor.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum

import z3

from verifier.chain.presburger import Aff, And, Cmp, Floor, Formula, Not, Or, formula_vars

SOLVER_NAME = f"z3-{z3.get_version_string()}"
# The deterministic budget of one chain query, in Z3 resource units (the same on any machine;
# the heaviest query of the bundled GEMMs uses about 18 million). The wall-clock limit given to
# `check` is only a safety net on top of it.
CHAIN_RLIMIT = 200_000_000


class Answer(Enum):
    unsat = "unsat"
    sat = "sat"
    unknown = "unknown"


@dataclass(frozen=True)
class Outcome:
    answer: Answer
    model: dict[str, int] | None
    reason: str
    time_s: float


class _Render:
    def __init__(self, ctx: z3.Context) -> None:
        self.ctx = ctx
        self.vars: dict[str, z3.ArithRef] = {}

    def var(self, name: str) -> z3.ArithRef:
        if name not in self.vars:
            self.vars[name] = z3.Int(name, self.ctx)
        return self.vars[name]

    def aff(self, a: Aff) -> z3.ArithRef:
        acc: z3.ArithRef = z3.IntVal(a.const, self.ctx)
        for k, c in a.coeffs:
            term = self.var(k) if isinstance(k, str) else self.floor(k)
            acc = acc + (term if c == 1 else c * term)
        return acc

    def floor(self, f: Floor) -> z3.ArithRef:
        return self.aff(f.arg) / z3.IntVal(f.d, self.ctx)

    def formula(self, f: Formula) -> z3.BoolRef:
        match f:
            case Cmp(aff=a, eq=True):
                return self.aff(a) == 0
            case Cmp(aff=a, eq=False):
                return self.aff(a) >= 0
            case And(parts=ps):
                return z3.And([self.formula(p) for p in ps]) if ps else z3.BoolVal(True, self.ctx)
            case Or(parts=ps):
                return z3.Or([self.formula(p) for p in ps]) if ps else z3.BoolVal(False, self.ctx)
            case Not(arg=x):
                return z3.Not(self.formula(x))
        raise TypeError(f)


def check(formula: Formula, timeout_s: float, minimize: tuple[str, ...] = (),
          ctx: z3.Context | None = None) -> Outcome:
    """Is `formula` satisfiable? A model names every variable of the formula; with `minimize`,
    a model with small values of those variables (the sizes) is looked for first, so replays
    run at small sizes."""
    start = time.perf_counter()
    ctx = ctx or z3.Context()
    render = _Render(ctx)
    goal = render.formula(formula)
    solver = z3.Solver(ctx=ctx)
    solver.set(timeout=max(1, int(timeout_s * 1000)), random_seed=0, rlimit=CHAIN_RLIMIT)
    solver.set("arith.solver", 2)
    solver.add(goal)
    result = solver.check()
    if result == z3.sat and minimize:
        for bound in (256, 1024, 4096):
            solver.push()
            solver.add(z3.And([render.var(v) <= bound for v in minimize if v in render.vars]))
            if solver.check() == z3.sat:
                break
            solver.pop()
        else:
            result = solver.check()
    elapsed = time.perf_counter() - start
    if result == z3.unsat:
        return Outcome(Answer.unsat, None, "", elapsed)
    if result == z3.sat:
        m = solver.model()
        model = {name: m.eval(v, model_completion=True).as_long()
                 for name, v in render.vars.items()}
        for name in formula_vars(formula) - set(model):
            model[name] = 0
        return Outcome(Answer.sat, model, "", elapsed)
    return Outcome(Answer.unknown, None, solver.reason_unknown(), elapsed)
