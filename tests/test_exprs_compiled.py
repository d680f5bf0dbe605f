"""The machine's compiled expressions (exprs.compile_expr, compile_boxes) against the tree walk
they replace (eval_expr): an instr call's window boxes, evaluated at every instance of the call
as one function (SEM-4.3), give the bounds each expression gives alone, compiled or not."""

from __future__ import annotations

import random

import pytest

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.semantics.exprs import PY_OPS, compile_boxes, compile_expr, eval_expr

LOC = SrcLoc("t.py", 1, 1)
SYMS = [ir.Sym.fresh(n) for n in "ijk"]


def _expr(rng: random.Random, depth: int, divisor_var: bool) -> ir.Expr:
    if depth == 0 or rng.random() < 0.3:
        return ir.Var(rng.choice(SYMS), LOC) if rng.random() < 0.6 else \
            ir.Const(rng.randrange(-4, 9), LOC)
    op = rng.choice(["+", "-", "*", "/", "%", "neg"])
    if op == "neg":
        return ir.USub(_expr(rng, depth - 1, divisor_var), LOC)
    lhs = _expr(rng, depth - 1, divisor_var)
    if op in "/%":  # a constant positive divisor compiles; a variable one keeps the tree walk
        rhs = ir.Var(SYMS[0], LOC) if divisor_var else ir.Const(rng.randrange(1, 5), LOC)
    else:
        rhs = _expr(rng, depth - 1, divisor_var)
    return ir.BinOp(op, lhs, rhs, LOC)


@pytest.mark.rule("SEM-4.3")
@pytest.mark.parametrize("divisor_var", [False, True])
def test_compiled_boxes_are_the_expressions_values(divisor_var: bool) -> None:
    rng = random.Random(15)
    for _ in range(200):
        boxes = [tuple((_expr(rng, 3, divisor_var), None if rng.random() < 0.5 else
                        _expr(rng, 3, divisor_var)) for _ in range(rng.randrange(1, 4)))
                 for _ in range(rng.randrange(1, 3))]
        fn = compile_boxes(boxes)
        for _ in range(5):
            env = {s: rng.randrange(1, 20) for s in SYMS}
            want = tuple(tuple((v := eval_expr(lo, env, PY_OPS), v + 1) if hi is None else
                               (eval_expr(lo, env, PY_OPS), eval_expr(hi, env, PY_OPS))
                               for lo, hi in box) for box in boxes)
            assert fn(env) == want
            assert [compile_expr(lo)(env) for box in boxes for lo, _ in box] == \
                [w[0] for box in want for w in box]
