"""The linear abstraction (encode/abstraction.py) walks terms through Z3's C API; it must give
the formula a walk over Python-wrapped terms gives (the reference below, the walk it replaced):
products of two or more non-constant factors become `mulN` of the factors in one order, nested
products inside out, constants kept as factors outside, quantifier bodies left alone."""

from __future__ import annotations

import z3

from verifier.encode.abstraction import linear_abstraction


def _reference(constraints: list[z3.BoolRef]) -> list[z3.BoolRef] | None:
    memo: dict[int, z3.ExprRef] = {}
    found = False

    def rebuild(e: z3.ExprRef) -> z3.ExprRef:
        nonlocal found
        if e.get_id() in memo:
            return memo[e.get_id()]
        out = e
        if z3.is_app(e) and e.num_args() > 0:
            kids = [rebuild(k) for k in e.children()]
            if z3.is_mul(e) and sum(not z3.is_int_value(k) for k in kids) >= 2:
                found = True
                args = sorted((k for k in kids if not z3.is_int_value(k)), key=lambda k: k.get_id())
                out = z3.Function(f"mul{len(args)}", *([e.sort()] * (len(args) + 1)))(*args)
                for c in (k for k in kids if z3.is_int_value(k)):
                    out = c * out
            elif any(k.get_id() != c.get_id() for k, c in zip(kids, e.children())):
                out = e.decl()(*kids)
        memo[e.get_id()] = out
        return out

    result = [rebuild(c) for c in constraints]
    return result if found else None


def _constraints(ctx: z3.Context) -> list[z3.BoolRef]:
    x, y, z, w = z3.Ints("x y z w", ctx)
    q = z3.Int("q", ctx)
    nested = z3.Product(x, y, z3.Product(z, w))  # a product inside a product
    return [nested + 3 * x * y > 7, z3.If(x * y == z, w * 2 * x, y) < 10,
            z3.ForAll([q], q * x >= 0), x * (y + z * w) == 4, z3.Distinct(x, y * z, w)]


def test_same_formula_as_the_wrapped_walk() -> None:
    ctx = z3.Context()
    got = linear_abstraction(_constraints(ctx))
    ctx2 = z3.Context()
    want = _reference(_constraints(ctx2))
    assert got is not None and want is not None
    assert [c.sexpr() for c in got] == [c.sexpr() for c in want]
    assert "mul2" in got[0].sexpr() and "mul3" in got[0].sexpr()
    assert "(* q x)" in got[2].sexpr()  # quantifier bodies are not abstracted


def test_no_product_no_abstraction() -> None:
    x, y = z3.Ints("x y")
    assert linear_abstraction([x + 2 * y > 3, 3 * x == y]) is None
    assert linear_abstraction([]) is None


def test_abstraction_keeps_unsat() -> None:
    ctx = z3.Context()
    x, y = z3.Ints("x y", ctx)
    s = z3.Solver(ctx=ctx)
    s.add(*linear_abstraction([x * y > 5, x * y < 3]))  # type: ignore[misc]
    assert s.check() == z3.unsat
