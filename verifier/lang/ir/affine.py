"""Index expressions as integer linear combinations, for syntactic facts about them.

Shared by call inlining (an argument window's extent against the parameter's shape, CALL-3,
and the callee's assertions, CALL-4) and the static rules of instruction arguments (a window's
extent, language.md §6). Quotients and remainders by a constant are taken whole, as terms:
equal sub-expressions are equal values (IR equality ignores locations).
"""

from __future__ import annotations

from verifier.lang.ir import ir

Affine = dict[object, int]  # term (a Sym or a whole `e / k`, `e % k`) -> coefficient;
#                             None -> the constant; no zero coefficients


def affine(e: ir.Expr) -> Affine | None:
    """`e` as an integer linear combination of terms; None for a product of two non-constant
    terms or a constant other than an int."""
    match e:
        case ir.Const(value=v) if type(v) is int:
            return {None: v} if v else {}
        case ir.Var(name=n):
            return {n: 1}
        case ir.USub(arg=a):
            x = affine(a)
            return None if x is None else {k: -c for k, c in x.items()}
        case ir.BinOp(op="/" | "%", rhs=ir.Const()):
            return {e: 1}
        case ir.BinOp(op=op, lhs=lhs, rhs=rhs) if op in ("+", "-", "*"):
            x, y = affine(lhs), affine(rhs)
            if x is None or y is None:
                return None
            if op == "*":
                if set(x) <= {None}:
                    x, y = y, x
                if not set(y) <= {None}:
                    return None  # a product of non-constant terms
                k = y.get(None, 0)
                return {t: c * k for t, c in x.items() if c * k}
            sign = 1 if op == "+" else -1
            out = dict(x)
            for t, c in y.items():
                out[t] = out.get(t, 0) + sign * c
            return {t: c for t, c in out.items() if c}
        case _:
            return None


def same_value(a: ir.Expr, b: ir.Expr) -> bool:
    """Equal for every value of their names: syntactically, or as the same linear combination
    (`(n + 4) - 4` and `n`). False means only "not shown"."""
    if a == b:
        return True
    x = affine(a)
    return x is not None and x == affine(b)


def constant_difference(lo: ir.Expr, hi: ir.Expr) -> int | None:
    """`hi - lo` when it is the same int for every value of the names, as linear
    combinations; None when not shown that way."""
    a, b = affine(lo), affine(hi)
    if a is None or b is None:
        return None
    diff = {t: b.get(t, 0) - a.get(t, 0) for t in set(a) | set(b)}
    if all(c == 0 for t, c in diff.items() if t is not None):
        return diff.get(None, 0)
    return None
