"""Fast Boolean connectives for the encoder's hot paths.

`z3.And`/`z3.Or` check and coerce every argument through several layers of Python; the
encoder builds hundreds of thousands of them for one proc (chain terms, trace order,
membership), which made term construction cost more than solving (issue 11 profile). These
call Z3's C API directly on arguments that are already Boolean terms of one context, and fold
the constants `True`/`False` away, which also keeps the queries smaller. Same formulas, up to
those constant folds.
"""

from __future__ import annotations

from collections.abc import Iterable

import z3


def _ids(ctx: z3.Context) -> tuple[int, int]:
    """Addresses of the constants true and false in `ctx` (cached on the context object)."""
    ids = getattr(ctx, "_spork_bool_ids", None)
    if ids is None:
        ids = (address(z3.BoolVal(True, ctx)), address(z3.BoolVal(False, ctx)))
        ctx._spork_bool_ids = ids  # type: ignore[attr-defined]
    return ids


def address(a: z3.ExprRef) -> int:
    """The term's node address: z3 hash-conses terms, so within one context two terms are
    the same node iff they are structurally equal (what `eq`/`get_id` compare, at a
    fifteenth of the cost of `get_id`'s checked C call). A cache key only while the term is
    alive (the caches keep theirs), never an order."""
    return a.ast.value  # type: ignore[no-any-return]


def _join(args: Iterable[z3.BoolRef | bool], ctx: z3.Context, is_and: bool) -> z3.BoolRef:
    true_id, false_id = _ids(ctx)
    unit, zero = (true_id, false_id) if is_and else (false_id, true_id)
    kept: list[z3.BoolRef] = []
    for a in args:
        if isinstance(a, bool):
            if a is (not is_and):
                return z3.BoolVal(not is_and, ctx)
            continue
        ident = address(a)
        if ident == unit:
            continue
        if ident == zero:
            return z3.BoolVal(not is_and, ctx)
        kept.append(a)
    if not kept:
        return z3.BoolVal(is_and, ctx)
    if len(kept) == 1:
        return kept[0]
    arr = (z3.Ast * len(kept))()
    for i, a in enumerate(kept):
        arr[i] = a.as_ast()
    make = z3.Z3_mk_and if is_and else z3.Z3_mk_or
    return z3.BoolRef(make(ctx.ref(), len(kept), arr), ctx)


def is_false(a: z3.BoolRef) -> bool:
    """`z3.is_false(a)` by address: `false` is one node of its context."""
    return address(a) == _ids(a.ctx)[1]


def conj(args: Iterable[z3.BoolRef | bool], ctx: z3.Context) -> z3.BoolRef:
    """And(args) with True dropped and False absorbing."""
    return _join(args, ctx, True)


def disj(args: Iterable[z3.BoolRef | bool], ctx: z3.Context) -> z3.BoolRef:
    """Or(args) with False dropped and True absorbing."""
    return _join(args, ctx, False)


_MAKE = {"<": z3.Z3_mk_lt, "<=": z3.Z3_mk_le, ">=": z3.Z3_mk_ge, ">": z3.Z3_mk_gt,
         "==": z3.Z3_mk_eq}
_REFLECTED = {"<": ">", "<=": ">=", ">=": "<=", ">": "<", "==": "=="}


def _compare(op: str, a: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
    """The term `a op b` builds for two integer terms of one context, without the operator's
    argument coercion (the encoder's order and range constraints, issue 9 profile). Python
    asks the right operand first when its type is a proper subclass of the left one's (a
    numeral `IntNumRef` right of a plain `ArithRef`): `v >= 0` is z3's `(<= 0 v)`, and this
    builds the same term, so every query text stays as the operators wrote it."""
    if type(b) is not type(a) and isinstance(b, type(a)):
        a, b, op = b, a, _REFLECTED[op]
    ctx = a.ctx
    return z3.BoolRef(_MAKE[op](ctx.ref(), a.as_ast(), b.as_ast()), ctx)


def lt(a: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
    """`a < b` (`_compare`)."""
    return _compare("<", a, b)


def le(a: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
    """`a <= b` (`_compare`)."""
    return _compare("<=", a, b)


def ge(a: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
    """`a >= b` (`_compare`)."""
    return _compare(">=", a, b)


def same(a: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
    """`a == b` (`_compare`)."""
    return _compare("==", a, b)
