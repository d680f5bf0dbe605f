"""C text of expressions, and how generated code reaches data variables (views).

Reads IR expressions and an `Env` that maps each control Sym to its C expression and each data
Sym to a `View` (C base, per-dimension strides, number of distributed leading indices to drop);
produces C expression text. Index arithmetic is folded where both sides are integer literals.
Division and modulo of control values print as C `/` and `%`: they agree with the DSL's floor
semantics on the non-negative operands that verified programs use (COLL-7.3).
Non-goals: statements, memory-specific layouts beyond strides (fragments carry a register count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from verifier.diagnostics import InternalError, SrcLoc, UnhandledNode, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import SpecialWindow
from verifier.lang.ir.printer import expr_text

_ATOM = re.compile(r"[A-Za-z0-9_.]+(\[[A-Za-z0-9_.]+\])?")
_INT = re.compile(r"-?[0-9]+")
# views whose elements only instructions reach (BW-CG-2, BW-CG-5)
OPAQUE_FAMILIES = ("tmem", "rmem_tcgen05")
_FLOAT_TYPES = ("float", "double", "__half", "__nv_bfloat16")
_OPS = {"+": "+", "-": "-", "*": "*", "/": "/", "%": "%", "<": "<", ">": ">", "<=": "<=",
        ">=": ">=", "==": "==", "and": "&&", "or": "||"}


def atom(text: str) -> str:
    """`text`, parenthesised unless it is a name, a literal or already one parenthesised group."""
    if _ATOM.fullmatch(text) and not text.startswith("-"):
        return text
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for pos, char in enumerate(text):
            depth += char == "("
            depth -= char == ")"
            if depth == 0 and pos < len(text) - 1:
                break
        else:
            return text
    return f"({text})"


def c_mul(lhs: str, rhs: str) -> str:
    """lhs * rhs with literal folding (0 and 1 absorbed)."""
    if lhs == "0" or rhs == "0":
        return "0"
    if lhs == "1":
        return rhs
    if rhs == "1":
        return lhs
    if _INT.fullmatch(lhs) and _INT.fullmatch(rhs):
        return str(int(lhs) * int(rhs))
    return f"{atom(lhs)} * {atom(rhs)}"


def c_add(terms: list[str]) -> str:
    """Sum of terms; integer literals are added up and zeros dropped."""
    const = sum(int(t) for t in terms if _INT.fullmatch(t))
    rest = [t for t in terms if not _INT.fullmatch(t)]
    if const:
        rest.append(str(const))
    if not rest:
        return "0"
    return " + ".join(rest)


def dense_strides(shape: list[str]) -> tuple[str, ...]:
    """Row-major strides of a dense tensor whose extents are C texts."""
    strides = ["1"] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = c_mul(shape[k + 1], strides[k + 1])
    return tuple(strides)


@dataclass(frozen=True, slots=True)
class View:
    """How generated code reaches one data variable.

    `base` is a pointer expression, or an lvalue when `scalar`. `strides` has one entry per
    dimension after the first `drop` (distributed, COLL-5.8) ones; `frag` > 0 marks an Sm80
    register fragment whose last two dimensions are `frag` registers per thread, not strided.
    `family` is the memory family; `elems` the element count of a whole dense allocation.
    `swizzle` > 0 marks `Sm90_SmemSwizzled(swizzle)` storage: `base` and `strides` describe the
    unswizzled (TMA / wgmma) addresses, and generic element accesses go through
    `exo_swizzled<swizzle>` (LANG-6.3).
    """

    ctype: str
    base: str
    strides: tuple[str, ...]
    drop: int = 0
    scalar: bool = False
    frag: int = 0
    family: str = ""
    elems: str = ""
    swizzle: int = 0

    def element(self, idx: list[str], loc: SrcLoc | None = None) -> str:
        """The lvalue of one element, given the C text of every logical index."""
        kept = idx[self.drop:]
        if self.frag or self.family in OPAQUE_FAMILIES:
            raise Unsupported(f"element access of {self.base} (an Sm80 register fragment, a "
                              "TMEM address or a tcgen05.ld tile: only instructions may use "
                              "it)", loc, code="ERR-L06", rule="LANG-8.7")
        if self.scalar:
            if kept:
                raise InternalError(f"scalar {self.base} indexed with {kept}")
            return self.base
        if len(kept) != len(self.strides):
            raise InternalError(f"{self.base}: {len(kept)} indices for {len(self.strides)} dims")
        offset = c_add([c_mul(i, s) for i, s in zip(kept, self.strides)])
        return swizzled(f"{atom(self.base)}[{offset}]", self.swizzle)

    def window(self, points: list[str | None], los: list[str]) -> View:
        """The view of a window: `points[k]` is the point index of dimension k or None for an
        interval starting at `los[k]`. Distributed dimensions are dropped first."""
        points, los = points[self.drop:], los[self.drop:]
        if self.scalar:
            if points:
                raise InternalError(f"window of scalar {self.base}")
            return self
        lead = len(self.strides)
        terms = [c_mul(p if p is not None else lo, s)
                 for p, lo, s in zip(points[:lead], los[:lead], self.strides)]
        strides = tuple(s for p, s in zip(points[:lead], self.strides) if p is None)
        offset = c_add(terms)
        if self.frag:  # the leading strides already count `frag` registers per fragment
            base = self.base if offset == "0" else f"({atom(self.base)} + {offset})"
            return View(self.ctype, base, strides, 0, False, self.frag, self.family)
        if all(p is not None for p in points):
            return View(self.ctype, swizzled(f"{atom(self.base)}[{offset}]", self.swizzle), (),
                        0, True, 0, self.family)
        base = self.base if offset == "0" else f"({atom(self.base)} + {offset})"
        return View(self.ctype, base, strides, 0, False, 0, self.family, swizzle=self.swizzle)

    def address(self) -> str:
        """The unswizzled address of the view's first element (TMA and wgmma operands)."""
        return f"&{self.base}" if self.scalar else self.base


@dataclass(frozen=True, slots=True)
class TensorMap:
    """One CPU-scope tensor map (or tensor-map parameter): the tensor it views, per tensor
    dimension the host window's point (`is_point`) or interval start, and the C name of its
    `CUtensorMap`. Rules: LANG-6.6, CG-T1"""

    sym: ir.Sym
    buf: ir.Sym
    special: SpecialWindow
    dims: tuple[tuple[bool, ir.Expr], ...]
    ctype: str
    cname: str
    loc: SrcLoc
    # CG-T1: a tensor-map parameter's window offsets in the caller's map (C expressions, one
    # per dimension, outermost first), added to every coordinate; () for a map made here
    offsets: tuple[str, ...] = ()

    @property
    def rank(self) -> int:
        return sum(1 for is_point, _ in self.dims if not is_point)

    @property
    def swizzle(self) -> int:
        return self.special.swizzle

    @property
    def box(self) -> tuple[int, ...]:
        return self.special.box

    @property
    def elem_bytes(self) -> int:
        return {"double": 8, "float": 4, "int32_t": 4, "__half": 2, "__nv_bfloat16": 2,
                "uint16_t": 2, "uint8_t": 1}[self.ctype]


@dataclass(slots=True)
class Env:
    """C expressions of the control values and views of the data variables in scope."""

    ctrl: dict[ir.Sym, str] = field(default_factory=dict)
    views: dict[ir.Sym, View] = field(default_factory=dict)
    tmaps: dict[ir.Sym, TensorMap] = field(default_factory=dict)

    def child(self) -> Env:
        return Env(dict(self.ctrl), dict(self.views), dict(self.tmaps))

    def view(self, sym: ir.Sym) -> View:
        try:
            return self.views[sym]
        except KeyError:
            raise InternalError(f"data variable {sym.name} has no view here") from None

    def rebind(self, sym: ir.Sym, view: View) -> None:
        self.views[sym] = view


def swizzled(lvalue: str, swizzle: int) -> str:
    """The element at the swizzled address of `lvalue` (unchanged when `swizzle` is 0).
    Rules: LANG-6.3"""
    return f"(*exo_swizzled<{swizzle}>(&{lvalue}))" if swizzle else lvalue


def float_literal(value: float, ctype: str | None, loc: SrcLoc | None = None) -> str:
    """A C floating literal; `f`-suffixed for float."""
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise Unsupported(f"non-finite constant {text}", loc, code="ERR-L06", rule="LANG-8.7")
    return text + "f" if ctype == "float" else text


def cexpr(e: ir.Expr, env: Env, dtype: str | None = None) -> str:
    """C text of an expression; `dtype` is the C type of a data expression (None for control
    expressions), used for the spelling of numeric literals."""
    match e:
        case ir.Const(value=bool() as value):
            return "true" if value else "false"
        case ir.Const(value=int() as value):
            if dtype in _FLOAT_TYPES:
                return float_literal(value, dtype, e.loc)
            return str(value) if value >= 0 else f"({value})"
        case ir.Const(value=float() as value):
            return float_literal(value, dtype, e.loc)
        case ir.Var(name=sym):
            try:
                return env.ctrl[sym]
            except KeyError:
                raise InternalError(f"control value {sym.name} has no C expression here",
                                    e.loc) from None
        case ir.Read(buf=buf, idx=idx):
            return env.view(buf).element([cexpr(i, env) for i in idx], e.loc)
        case ir.BinOp(op=op, lhs=lhs, rhs=rhs):
            sub = dtype if op in ("+", "-", "*", "/", "%") else None
            left, right = cexpr(lhs, env, sub), cexpr(rhs, env, sub)
            return f"({left} {_OPS[op]} {right})"
        case ir.USub(arg=arg):
            return f"(-{atom(cexpr(arg, env, dtype))})"
        case ir.Stride(buf=buf, dim=dim):
            view = env.view(buf)
            if not 0 <= dim - view.drop < len(view.strides):
                raise Unsupported(f"stride({buf.name}, {dim}) of a distributed or fragment "
                                  "dimension", e.loc, code="ERR-L06", rule="LANG-8.7")
            return view.strides[dim - view.drop]
        case ir.Window():
            raise Unsupported(f"window {expr_text(e)} used as a value", e.loc, code="ERR-L06",
                              rule="LANG-8.7")
        case _:
            raise UnhandledNode(e)


def window_view(w: ir.Window, env: Env) -> View:
    """The view of a window expression `x[a:b, i, ...]` (COLL-5.8: distributed dims dropped)."""
    points: list[str | None] = []
    los: list[str] = []
    for acc in w.idx:
        match acc:
            case ir.Point(pt=pt):
                points.append(cexpr(pt, env))
                los.append("0")
            case ir.Interval(lo=lo):
                points.append(None)
                los.append(cexpr(lo, env))
            case _:
                raise UnhandledNode(acc)
    return env.view(w.buf).window(points, los)
