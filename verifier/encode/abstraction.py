"""The linear abstraction of a query with products (closed-form counts of non-rectangular
nests, nest_sums.py; products in index expressions).

Every product of non-constant terms (outside quantifier bodies) is replaced by an uninterpreted function of its factors.
Every model of the original is a model of the abstraction, so unsat carries over: a cheap
linear-arithmetic-with-congruence try before nonlinear arithmetic.
"""

from __future__ import annotations

import z3


def linear_abstraction(constraints: list[z3.BoolRef]) -> list[z3.BoolRef] | None:
    """The constraints with products abstracted (None when there is none)."""
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
                              key=lambda k: k.get_id())  # products commute: one order
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

