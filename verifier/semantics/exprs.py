"""Control-expression evaluation written once over an operations table (style.md §6).

`PY_OPS` evaluates on Python ints (the machine); the encoder supplies a Z3 table. Division and
modulo follow Exo: floor division and non-negative remainder, by positive divisors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, Mapping, TypeVar

from verifier.diagnostics import RejectedInput, Unsupported
from verifier.lang.ir import ir

T = TypeVar("T")


@dataclass(frozen=True)
class Ops(Generic[T]):
    const: Callable[[int | bool], T]
    add: Callable[[T, T], T]
    sub: Callable[[T, T], T]
    mul: Callable[[T, T], T]
    div: Callable[[T, T], T]
    mod: Callable[[T, T], T]
    neg: Callable[[T], T]
    cmp: Callable[[str, T, T], T]
    and_: Callable[[T, T], T]
    or_: Callable[[T, T], T]


def _py_div(a: int, b: int) -> int:
    if b <= 0:
        raise RejectedInput(f"division by non-positive value {b}", code="ERR-V11")
    return a // b


def _py_mod(a: int, b: int) -> int:
    if b <= 0:
        raise RejectedInput(f"modulo by non-positive value {b}", code="ERR-V11")
    return a % b


_PY_CMP: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b,
}

PY_OPS: Ops[Any] = Ops(
    const=lambda v: v, add=lambda a, b: a + b, sub=lambda a, b: a - b,
    mul=lambda a, b: a * b, div=_py_div, mod=_py_mod, neg=lambda a: -a,
    cmp=lambda op, a, b: _PY_CMP[op](a, b), and_=lambda a, b: bool(a) and bool(b),
    or_=lambda a, b: bool(a) or bool(b),
)


# The values a control argument of each kind admits (LANG-2.3, LANG-2.5): least, greatest
# (None: unbounded); a kind not listed admits every integer. Shared by the machine's
# preconditions, the encoder's assumptions and the check of `--sizes`.
CONTROL_RANGES: dict[str, tuple[int, int | None]] = {"size": (0, None), "bool": (0, 1)}


def admits(kind: str, value: int) -> bool:
    """`value` is in the range of a control argument of `kind` (CONTROL_RANGES)."""
    lo, hi = CONTROL_RANGES.get(kind, (value, value))
    return lo <= value and (hi is None or value <= hi)

def eval_expr(e: ir.Expr, env: Mapping[ir.Sym, T], ops: Ops[T]) -> T:
    """Value of a control expression (sizes, indices, iterators, constants)."""
    match e:
        case ir.Const(value=value):
            if isinstance(value, float):
                raise Unsupported("not supported by spork-verify: a float in a control "
                                  "expression", e.loc, code="ERR-V11")
            return ops.const(value)
        case ir.Var(name=name):
            return env[name]
        case ir.USub(arg=arg):
            return ops.neg(eval_expr(arg, env, ops))
        case ir.BinOp(op=op, lhs=lhs, rhs=rhs):
            a, b = eval_expr(lhs, env, ops), eval_expr(rhs, env, ops)
            match op:
                case "+":
                    return ops.add(a, b)
                case "-":
                    return ops.sub(a, b)
                case "*":
                    return ops.mul(a, b)
                case "/" | "%":
                    try:
                        return ops.div(a, b) if op == "/" else ops.mod(a, b)
                    except (RejectedInput, Unsupported) as err:
                        if err.loc.line == 0:
                            err.loc = e.loc
                        raise
                case "and":
                    return ops.and_(a, b)
                case "or":
                    return ops.or_(a, b)
                case _:
                    return ops.cmp(op, a, b)
        case ir.Stride() if e.key in env:  # an assert's window stride (LANG-2.8)
            return env[e.key]
        case ir.Read() | ir.Stride() | ir.Window():
            raise Unsupported("not supported by spork-verify: data-dependent control value "
                              f"`{type(e).__name__}`", e.loc, code="ERR-V11", rule="LANG-2.7")
        case _:
            raise Unsupported(f"unhandled expression {type(e).__name__}", getattr(e, "loc", None))


def strides_read(e: ir.Expr) -> dict[ir.Sym, ir.Stride]:
    """The window strides `e` reads, by their environment name (LANG-2.8)."""
    match e:
        case ir.Stride():
            return {e.key: e}
        case ir.BinOp(lhs=lhs, rhs=rhs):
            return strides_read(lhs) | strides_read(rhs)
        case ir.USub(arg=arg):
            return strides_read(arg)
        case _:
            return {}


def layout_free(preds: tuple[ir.Expr, ...]) -> tuple[ir.Expr, ...]:
    """The asserts a run at concrete sizes checks: those that read no window stride. The
    machine has no layout, so a stride has no value there (LANG-2.8: the proof quantifies it,
    a call fixes it), as upstream's sync_check reads no assert at all."""
    return tuple(p for p in preds if not strides_read(p))


def data_reads(e: ir.Expr) -> list[ir.Read]:
    """Tensor reads in a data expression, left to right (SEM-1.8 order within a statement)."""
    match e:
        case ir.Read():
            return [e]
        case ir.BinOp(lhs=lhs, rhs=rhs):
            return data_reads(lhs) + data_reads(rhs)
        case ir.USub(arg=arg):
            return data_reads(arg)
        case ir.Const() | ir.Var() | ir.Stride() | ir.Window():
            return []
        case _:
            raise Unsupported(f"unhandled expression {type(e).__name__}", getattr(e, "loc", None))


_SRC_OPS = {"+": "+", "-": "-", "*": "*", "<": "<", ">": ">", "<=": "<=", ">=": ">=",
            "==": "=="}


def _source(x: ir.Expr, names: dict[str, Any]) -> str:
    """Python source of an arithmetic expression over `env` (its symbols bound in `names`)."""
    match x:
        case ir.Const(value=value) if isinstance(value, (bool, int)):
            return repr(value)
        case ir.Var(name=name):
            key = f"_s{len(names)}"
            names[key] = name
            return f"env[{key}]"
        case ir.USub(arg=arg):
            return f"(-{_source(arg, names)})"
        case ir.BinOp(op=op, lhs=lhs, rhs=rhs) if op in _SRC_OPS:
            return f"({_source(lhs, names)} {_SRC_OPS[op]} {_source(rhs, names)})"
        case ir.BinOp(op="and" | "or", lhs=lhs, rhs=rhs):
            op = "&" if x.op == "and" else "|"  # both sides evaluated, as eval_expr does
            return f"(bool({_source(lhs, names)}) {op} bool({_source(rhs, names)}))"
        case ir.BinOp(op="/" | "%", lhs=lhs, rhs=ir.Const(value=int() as d)) \
                if d > 0 and not isinstance(d, bool):
            return f"({_source(lhs, names)} {'//' if x.op == '/' else '%'} {d})"
        case _:
            raise _NotCompiled


def compile_expr(e: ir.Expr) -> Callable[[Mapping[ir.Sym, Any]], Any]:
    """`eval_expr(e, env, PY_OPS)` as one Python function of `env` (the machine evaluates
    every index and bound of every statement instance; a tree walk per value dominated it).
    Expressions outside the arithmetic subset keep the tree walk, which raises their error."""
    names: dict[str, Any] = {"_div": _py_div, "_mod": _py_mod}
    try:
        body = _source(e, names)
    except _NotCompiled:
        return lambda env: eval_expr(e, env, PY_OPS)
    return eval(f"lambda env: {body}", names)  # noqa: S307 - source built above from the IR


BoxExprs = tuple[tuple[ir.Expr, "ir.Expr | None"], ...]  # (lo, hi) per dim; hi None: a point


def compile_boxes(boxes: list[BoxExprs]
                  ) -> Callable[[Mapping[ir.Sym, Any]], tuple[tuple[tuple[int, int], ...], ...]]:
    """Boxes [lo, hi) of expressions as one Python function of `env` (a point lo is
    [lo, lo + 1)): an instr call's windows, evaluated at every instance of the call."""
    names: dict[str, Any] = {"_div": _py_div, "_mod": _py_mod}
    try:
        parts = []
        for box in boxes:
            dims = []
            for lo, hi in box:
                low = _source(lo, names)
                dims.append(f"({low}, {low} + 1)" if hi is None else
                            f"({low}, {_source(hi, names)})")
            parts.append("(" + "".join(d + ", " for d in dims) + ")")
    except _NotCompiled:
        fns = [[(compile_expr(lo), None if hi is None else compile_expr(hi)) for lo, hi in box]
               for box in boxes]
        return lambda env: tuple(tuple(_dim(lo(env), hi, env) for lo, hi in box)
                                 for box in fns)
    body = "".join(p + ", " for p in parts)
    return eval(f"lambda env: ({body})", names)  # noqa: S307 - source built above from the IR


def _dim(lo: int, hi: Callable[[Mapping[ir.Sym, Any]], Any] | None, env: Mapping[ir.Sym, Any]
         ) -> tuple[int, int]:
    return (lo, lo + 1) if hi is None else (lo, hi(env))


class _NotCompiled(Exception):
    """An expression the compiler leaves to `eval_expr` (floats, reads, variable divisors)."""
