"""The `@proc` decorator and `simplify` (LANG-2.1, LANG-1.5).

`@proc` raises a located `SporkError` at decoration time, as upstream's `@proc` does, so a bad
proc stops the file where it is written (never an object that fails later, far away). The error
names the proc (`error.proc`); the loader turns it into that proc's `rejected` result.
Internal failures are wrapped as InternalError.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from typing import Any, Callable

from verifier.diagnostics import InternalError, RejectedInput, SporkError, SrcLoc
from verifier.lang.ir import ir
from verifier.lang.parse.parse import ProcParser


def proc(fn: Callable[..., Any]) -> ir.Proc:
    if not inspect.isfunction(fn):  # a class, a lambda's result, a builtin: nothing to parse
        err = RejectedInput(f"@proc decorates a `def` function, not {_what(fn)}; write the "
                            "kernel as `@proc def name(...):`", code="ERR-P00", rule="LANG-2.1")
        err.proc = getattr(fn, "__name__", None) or "<proc>"
        raise err
    caller = sys._getframe(1)  # where `@proc` is applied: the defining scope (LANG-2.2)
    return parse_function(fn, dict(caller.f_locals) if caller.f_code.co_name != "<module>"
                          else None)


def parse_function(fn: Callable[..., Any], defining: dict[str, Any] | None = None) -> ir.Proc:
    """The proc `fn`'s source defines, its free names read in `defining` (the locals of the
    function applying `@proc`), the closure and the globals (LANG-2.2)."""
    try:
        parsed = ProcParser(fn, defining).parse()
        check_nesting(parsed)
        return parsed
    except SporkError as e:
        e.proc = fn.__name__
        raise
    except RecursionError:  # before check_nesting could see it: the parser's own recursion
        err = RejectedInput(_TOO_DEEP, code="ERR-P00", rule="LANG-2.1")
        err.proc = fn.__name__
        raise err from None
    except Exception as e:  # a bug in the parser: exit 4, never a user-facing traceback
        err = InternalError(f"internal error while parsing {fn.__name__}: "
                            f"{type(e).__name__}: {e}")
        err.proc = fn.__name__
        raise err from None


MAX_NESTING = 100  # IR nodes inside one another; every pass over the IR recurses this deep
_TOO_DEEP = (f"the proc nests expressions or statements more than {MAX_NESTING} levels deep; "
             "split the expression into local variables or the body into smaller loops")


def check_nesting(p: ir.Proc) -> None:
    """Reject IR nested deeper than MAX_NESTING (LANG-2.1, specs/cli.md CLI-2), so no later
    pass (pickling, printing, encoding) hits Python's recursion limit. Iterative."""
    stack: list[tuple[object, int, SrcLoc | None]] = [(p, 0, p.loc)]
    seen: set[int] = set()
    while stack:
        node, depth, where = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, (tuple, list)):
            stack.extend((x, depth, where) for x in node)
            continue
        if not dataclasses.is_dataclass(node) or isinstance(node, type):
            continue
        where = getattr(node, "loc", where) if isinstance(getattr(node, "loc", None),
                                                           SrcLoc) else where
        if depth > MAX_NESTING:
            raise RejectedInput(_TOO_DEEP, where, code="ERR-P00", rule="LANG-2.1")
        stack.extend((getattr(node, f.name), depth + 1, where)
                     for f in dataclasses.fields(node))


def _what(obj: object) -> str:
    if inspect.isclass(obj):
        return f"the class {obj.__name__}"
    return f"a {type(obj).__name__}"


def _fold(e: ir.Expr) -> ir.Expr:
    match e:
        case ir.BinOp(op=op, lhs=lhs, rhs=rhs, loc=loc):
            a, b = _fold(lhs), _fold(rhs)
            if isinstance(a, ir.Const) and isinstance(b, ir.Const) and \
                    isinstance(a.value, int) and isinstance(b.value, int) and \
                    op in ("+", "-", "*") or (op in ("/", "%") and isinstance(b, ir.Const)
                                               and isinstance(a, ir.Const) and b.value > 0):
                assert isinstance(a, ir.Const) and isinstance(b, ir.Const)
                x, y = a.value, b.value
                value = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y,
                         "/": lambda: x // y, "%": lambda: x % y}[op]()
                return ir.Const(value, loc)
            if op == "+" and isinstance(b, ir.Const) and b.value == 0:
                return a
            if op == "+" and isinstance(a, ir.Const) and a.value == 0:
                return b
            if op == "*" and isinstance(b, ir.Const) and b.value == 1:
                return a
            if op == "*" and isinstance(a, ir.Const) and a.value == 1:
                return b
            return ir.BinOp(op, a, b, loc)
        case ir.USub(arg=arg, loc=loc):
            inner = _fold(arg)
            if isinstance(inner, ir.Const):
                return ir.Const(-inner.value, loc)
            return ir.USub(inner, loc)
        case _:
            return e


def _fold_node(node: Any) -> Any:
    if isinstance(node, (ir.BinOp, ir.USub)):
        return _fold(node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type) and \
            type(node).__module__ == ir.__name__:
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            new = _fold_node(value)
            if new is not value:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node
    if isinstance(node, tuple):
        items: list[Any] = []
        for x in node:
            y = _fold_node(x)
            if isinstance(y, ir.If) and isinstance(y.cond, ir.Const):
                items.extend(y.body if y.cond.value else y.orelse)  # `if True:` unwrapped
            else:
                items.append(y)
        same = len(items) == len(node) and all(a is b for a, b in zip(items, node))
        return node if same else tuple(items)
    return node


def simplify(p: ir.Proc) -> ir.Proc:
    """A copy of `p` with constant subexpressions folded and `if` statements with a constant
    condition replaced by the branch taken (LANG-1.5)."""
    return _fold_node(p)
