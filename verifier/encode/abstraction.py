"""The linear abstraction of a query with products (closed-form counts of non-rectangular
nests, nest_sums.py; products in index expressions).

Every product of non-constant terms (outside quantifier bodies) is replaced by an uninterpreted function of its factors.
Every model of the original is a model of the abstraction, so unsat carries over: a cheap
linear-arithmetic-with-congruence try before nonlinear arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3
from z3 import z3core as C
from z3.z3 import _to_expr_ref


def _unchecked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The C function under a z3core wrapper, without the error check after each call: these
    getters cannot fail on a term of a live context (the checked wrapper when z3's layout
    differs)."""
    elems = (fn.__defaults__ or (None,))[-1]
    return getattr(elems, "f", fn)


def linear_abstraction(constraints: list[z3.BoolRef]) -> list[z3.BoolRef] | None:
    """The constraints with products abstracted (None when there is none).

    The walk reads and builds terms through Z3's C API (a Python wrapper per visited node was
    most of a proof's CPU time); it visits the nodes and makes the new ones in the order of a
    walk over wrapped terms, so the result is the same formula."""
    if not constraints:
        return None
    ctx = constraints[0].ctx
    ref = ctx.ref()
    ast_id, ast_kind, num_args, arg, app_decl, decl_kind, is_numeral, get_sort, sort_kind, \
        mk_app = (_unchecked(f) for f in (
            C.Z3_get_ast_id, C.Z3_get_ast_kind, C.Z3_get_app_num_args, C.Z3_get_app_arg,
            C.Z3_get_app_decl, C.Z3_get_decl_kind, C.Z3_is_numeral_ast, C.Z3_get_sort,
            C.Z3_get_sort_kind, C.Z3_mk_app))
    memo: dict[int, Any] = {}  # ast id -> its rebuilt term (a raw ast); None: unchanged
    keep: list[z3.AstRef] = []  # a reference to each new term, so Z3 keeps it
    found = False

    def is_int_value(a: Any) -> bool:
        return bool(is_numeral(ref, a)) and sort_kind(ref, get_sort(ref, a)) == z3.Z3_INT_SORT

    def product(a: Any, kids: list[Any]) -> Any:
        consts = [_to_expr_ref(k, ctx) for k in kids if is_int_value(k)]
        args = sorted((_to_expr_ref(k, ctx) for k in kids if not is_int_value(k)),
                      key=lambda k: k.get_id())  # products commute: one order
        sort = _to_expr_ref(a, ctx).sort()
        out = z3.Function(f"mul{len(args)}", *([sort] * (len(args) + 1)))(*args)
        for c in consts:
            out = c * out
        keep.append(out)
        return out.as_ast()

    def rebuild(a: Any) -> Any:
        nonlocal found
        key = ast_id(ref, a)
        if key in memo:
            return memo[key]
        out = None
        n = num_args(ref, a) if ast_kind(ref, a) == z3.Z3_APP_AST else 0
        if n > 0:
            raw = [arg(ref, a, i) for i in range(n)]
            new = [rebuild(k) for k in raw]
            kids = [k if x is None else x for k, x in zip(raw, new)]
            decl = app_decl(ref, a)
            if decl_kind(ref, decl) == z3.Z3_OP_MUL and \
                    sum(not is_int_value(k) for k in raw) >= 2:
                found = True
                out = product(a, kids)
            elif any(x is not None for x in new):
                out = mk_app(ref, decl, n, (z3.Ast * n)(*kids))
                keep.append(z3.AstRef(out, ctx))
        memo[key] = out
        return out

    result = []
    for c in constraints:
        new = rebuild(c.as_ast())
        result.append(c if new is None else _to_expr_ref(new, ctx))
    return result if found else None  # type: ignore[return-value]
