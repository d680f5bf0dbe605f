"""Calls of ordinary procs at CPU scope, modelled by inlining the callee (LANG-3.10, CALL-*).

A call `f(n, x[0:n], y)` of a `@proc` means: run `f`'s body with its parameters bound to the
arguments. The verified program is the caller with each such call replaced by the callee's
body (its own calls inlined first), so every analysis (static rules, the machine, the proof)
sees the callee's accesses exactly, on the caller's buffers, with the callee's source
locations kept:
  - a control parameter (size, index, bool, stride) becomes the argument's expression;
  - a tensor or scalar parameter bound to the window `x[p, a:b, c:d]` maps the callee's
    index `[i, j]` to `x[p, a + i, c + j]` (windows and strides likewise) (CALL-2);
  - the callee's binders (loop iterators, allocations, window statements) are renamed to
    fresh symbols, so two calls never share a variable.
As upstream checks at a call, the argument's memory and element type must be the parameter's
and its window extents the parameter's shape (CALL-3, rejected otherwise), and the callee's
assertions must hold at the call (CALL-4). spork-verify shows an assertion from the caller's
assertions and enclosing loop bounds (syntactically, or by interval bounds with each size at
least 1); one it cannot show is `unsupported` naming it, never assumed. Calls inside CUDA
scope stay calls (the static rules reject them, ERR-A04), as do calls with a trailing barrier.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from verifier.diagnostics import RejectedInput, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.ir.affine import same_value
from verifier.lang.ir.printer import expr_text
from verifier.lang.parse.procs import _fold
from verifier.lang.stdlib import dialects
from verifier.lang.rewrite.scheduling_loops import Bound, _size_bounds, _walk, bound, fresh_binders


def has_proc_calls(p: ir.Proc) -> bool:
    """Whether `p` calls a proc (calls are statements: no expression needs a visit)."""
    return any(isinstance(s, ir.Call) and isinstance(s.callee, ir.Proc)
               for s in ir.statements(p.body))


def inlined_callees(p: ir.Proc) -> tuple[ir.Proc, ...]:
    """The procs `inline_calls(p)` inlines directly (CPU scope, no trailing barrier), each
    once. Their accesses land on the caller's buffers, not bounded by the windows passed, so
    a proof of `p` rests on each callee's own bounds proof (CALL-2)."""
    found: dict[int, ir.Proc] = {}

    def visit(body: tuple[ir.Stmt, ...]) -> None:
        for s in body:
            if isinstance(s, ir.Call) and isinstance(s.callee, ir.Proc) and not s.trailing:
                found.setdefault(id(s.callee), s.callee)
            elif isinstance(s, ir.For):
                visit(s.body)
            elif isinstance(s, ir.If):
                visit(s.body)
                visit(s.orelse)
    visit(p.body)
    return tuple(found.values())


def inline_calls(p: ir.Proc) -> ir.Proc:
    """`p` with every call of a proc at CPU scope replaced by the callee's body (CALL-1);
    `p` itself when it has none."""
    if not has_proc_calls(p):
        return p
    inliner = _Inliner(p)
    body = inliner.stmts(p.body, _size_bounds(p))
    # DIAL-1: the inlined kernels' dialect rules apply to them (a CPU wrapper, written in no
    # dialect of its own, calling an endgame kernel)
    kernels = {c.dialect for c in inlined_callees(p)}
    dialect = dialects.ENDGAME if dialects.ENDGAME in kernels else p.dialect
    return dataclasses.replace(p, body=body, preds=p.preds + tuple(inliner.assumed),
                               dialect=dialect)


class _Inliner:
    def __init__(self, caller: ir.Proc) -> None:
        self.caller = caller
        self.types: dict[ir.Sym, tuple[ir.Type, Any]] = {a.name: (a.typ, a.mem)
                                                         for a in caller.args}
        # callee assertions over the caller's arguments alone, shown to hold (CALL-4): the
        # inlined proc assumes them, so no counterexample breaks the callee's assertions
        self.assumed: list[ir.Expr] = []
        self.controls = {a.name for a in caller.args if isinstance(a.typ, ir.Control)}
        _walk(caller.body, self._note_alloc)

    def _note_alloc(self, n: Any) -> None:
        if isinstance(n, ir.Alloc):
            self.types[n.name] = (n.typ, n.mem)

    def stmts(self, body: tuple[ir.Stmt, ...], env: dict[ir.Sym, Bound]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.Call) and isinstance(s.callee, ir.Proc) and not s.trailing:
                out.extend(self.call(s, env))
            elif isinstance(s, ir.For):
                inner = dict(env)
                lo, hi = bound(s.lo, env)[0], bound(s.hi, env)[1]
                inner[s.iter] = (lo, None if hi is None else hi - 1)
                out.append(dataclasses.replace(s, body=self.stmts(s.body, inner)))
            elif isinstance(s, ir.If):
                out.append(dataclasses.replace(s, body=self.stmts(s.body, env),
                                               orelse=self.stmts(s.orelse, env)))
            else:  # DeviceFunction bodies are CUDA scope: their calls stay (ERR-A04)
                out.append(s)
        return tuple(out)

    def call(self, s: ir.Call, env: dict[ir.Sym, Bound]) -> tuple[ir.Stmt, ...]:
        callee: ir.Proc = s.callee
        controls: dict[ir.Sym, ir.Expr] = {}
        tensors: dict[ir.Sym, ir.Window] = {}
        for param, arg in zip(callee.args, s.args):
            if isinstance(param.typ, ir.Control):
                if isinstance(arg, ir.Window):
                    raise RejectedInput(f"{callee.name}: argument {param.name.name} is a "
                                        f"{param.typ.kind}, not a tensor {expr_text(arg)}",
                                        s.loc, rule="CALL-3", code="ERR-P21")
                controls[param.name] = arg
            elif isinstance(param.typ, (ir.Tensor, ir.Scalar)):
                if isinstance(arg, ir.Read):
                    arg = ir.Window(arg.buf, tuple(ir.Point(i, i.loc) for i in arg.idx),
                                    arg.loc)
                if not isinstance(arg, ir.Window):
                    raise RejectedInput(f"{callee.name}: argument {param.name.name} must be a "
                                        f"buffer or window, not {expr_text(arg)}", s.loc,
                                        rule="CALL-3", code="ERR-P21")
                tensors[param.name] = arg
            else:
                raise Unsupported(f"not supported by spork-verify: a barrier argument "
                                  f"({param.name.name}) of the proc {callee.name}", s.loc,
                                  rule="CALL-1", code="ERR-V11")
        sub = _Substitution(controls, tensors, {})
        for param, arg in zip(callee.args, s.args):
            if param.name in tensors:
                self.check_arg(s, callee, param, tensors[param.name], sub)
        for pred in callee.preds:
            self.precondition(s, callee, pred, sub.node(pred), env)
        body = inline_calls(callee).body  # the callee's own calls first
        sub.binders.update(fresh_binders(body))
        return tuple(sub.node(x) for x in body)

    def check_arg(self, s: ir.Call, callee: ir.Proc, param: ir.Arg, w: ir.Window,
                  sub: "_Substitution") -> None:
        """CALL-3: the argument's memory, element type and extents are the parameter's."""
        typ, mem = self.types.get(w.buf, (None, None))
        pname = param.name.name
        if typ is None or not isinstance(typ, (ir.Tensor, ir.Scalar)):
            raise RejectedInput(f"{callee.name}: argument {pname} must be a data buffer, not "
                                f"{w.buf.name}", s.loc, rule="CALL-3", code="ERR-P21")
        if param.tensor_map is not None and (w.tensor_map is None or
                                             w.tensor_map[1] != param.tensor_map):
            have = w.tensor_map[1] if w.tensor_map is not None else mem
            raise RejectedInput(f"expected `{pname}` argument of {callee.name} in "
                                f"{param.tensor_map} but got an argument in "
                                f"{have} ({expr_text(w)}); pass a window of "
                                f"`m = g[...] @ {param.tensor_map}`", w.loc,
                                rule="CALL-3", code="ERR-A07", variable=w.buf.name)
        want_mem = getattr(param.mem, "name", param.mem)
        have_mem = getattr(mem, "name", mem)
        if want_mem is not None and want_mem != have_mem and \
                want_mem not in getattr(mem, "bases", ()):
            raise RejectedInput(f"expected `{w.buf.name}` argument of {callee.name} in "
                                f"{want_mem} but got an argument in {have_mem}", s.loc,
                                rule="CALL-3", code="ERR-A07", variable=w.buf.name)
        base, pbase = ir.element_type(typ), ir.element_type(param.typ)
        if "R" not in (base, pbase) and base != pbase:
            raise RejectedInput(f"{callee.name}: argument {pname} expects {pbase} data, not "
                                f"{base} ({w.buf.name})", s.loc, rule="CALL-3",
                                code="ERR-P21", variable=w.buf.name)
        extents = [a for a in w.idx if isinstance(a, ir.Interval)]
        shape = param.typ.shape if isinstance(param.typ, ir.Tensor) else ()
        if len(extents) != len(shape):
            raise RejectedInput(f"{callee.name}: argument {pname} has {len(shape)} "
                                f"dimension(s), the window {expr_text(w)} has "
                                f"{len(extents)}", s.loc, rule="CALL-3", code="ERR-P21",
                                variable=w.buf.name)
        for k, (iv, dim) in enumerate(zip(extents, shape)):
            want = _fold(sub.node(dim))
            have = _fold(ir.BinOp("-", iv.hi, iv.lo, iv.loc))
            if same_value(want, have):
                continue
            if isinstance(want, ir.Const) and isinstance(have, ir.Const):
                raise RejectedInput(f"{callee.name}: argument {pname} dimension {k} has "
                                    f"extent {want.value}, the window {expr_text(w)} has "
                                    f"{have.value}", s.loc, rule="CALL-3", code="ERR-P21",
                                    variable=w.buf.name)
            raise Unsupported(f"not supported by spork-verify: cannot show that dimension {k} "
                              f"of the window {expr_text(w)} has the extent "
                              f"{expr_text(want)} of {callee.name}'s argument {pname}", s.loc,
                              rule="CALL-3", code="ERR-V11", variable=w.buf.name)

    def precondition(self, s: ir.Call, callee: ir.Proc, original: ir.Expr, pred: ir.Expr,
                     env: dict[ir.Sym, Bound]) -> None:
        """CALL-4: the callee's assertion `pred` (over the caller's names) holds at the call."""
        shown = _fold(self.dense_strides(pred))
        if isinstance(shown, ir.BinOp) and shown.op in _CMP and \
                isinstance(shown.lhs, ir.Const) and isinstance(shown.rhs, ir.Const):
            shown = ir.Const(bool(_CMP[shown.op](shown.lhs.value, shown.rhs.value)), shown.loc)
        if isinstance(shown, ir.Const) and not shown.value:  # upstream's bounds check rejects
            raise RejectedInput(f"Could not verify assertion {_bare(original)} in "
                                f"{callee.name} at {original.loc}: it is false at this call, "
                                f"where it reads {_bare(self.dense_strides(pred))}", s.loc,
                                rule="CALL-4", code="ERR-P29")
        pred = shown
        if _implied(pred, self.caller.preds, env):
            names: set[ir.Sym] = set()
            _walk(pred, lambda n: names.add(n.name) if isinstance(n, ir.Var) else None)
            if names <= self.controls and pred not in self.assumed and \
                    not isinstance(pred, ir.Const):
                self.assumed.append(pred)
            return
        raise Unsupported(f"not supported by spork-verify: cannot show that {callee.name}'s "
                          f"assertion `{expr_text(pred)}` holds at this call from "
                          f"{self.caller.name}'s assertions; assert it in {self.caller.name}",
                          s.loc, rule="CALL-4", code="ERR-V11")

    def dense_strides(self, e: ir.Expr) -> ir.Expr:
        """`e` with the stride of each dense caller buffer as its extents' product: a window
        parameter's stride is the actual's at the call (LANG-2.8)."""
        match e:
            case ir.Stride(buf=buf, dim=dim):
                typ = self.types.get(buf, (None, None))[0]
                if isinstance(typ, ir.Tensor) and not typ.window and 0 <= dim < len(typ.shape):
                    return ir.dense_stride(typ.shape[dim + 1:], e.loc)
                return e
            case ir.BinOp(lhs=lhs, rhs=rhs):
                return dataclasses.replace(e, lhs=self.dense_strides(lhs),
                                           rhs=self.dense_strides(rhs))
            case ir.USub(arg=arg):
                return dataclasses.replace(e, arg=self.dense_strides(arg))
            case _:
                return e


def _bare(e: ir.Expr) -> str:
    """`e`'s text without the parentheses the printer puts round a whole comparison."""
    text = expr_text(e)
    return text[1:-1] if isinstance(e, ir.BinOp) and text.startswith("(") else text


_CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b, "==": lambda a, b: a == b}


def _implied(pred: ir.Expr, facts: tuple[ir.Expr, ...], env: dict[ir.Sym, Bound]) -> bool:
    """Whether `pred` follows from `facts` and the interval bounds `env` (sound, partial)."""
    if isinstance(pred, ir.Const):
        return bool(pred.value)
    if any(same_value(pred, _fold(f)) for f in facts):
        return True
    if not isinstance(pred, ir.BinOp):
        return False
    if isinstance(pred.lhs, ir.Const) and isinstance(pred.rhs, ir.Const) and pred.op in _CMP:
        return bool(_CMP[pred.op](pred.lhs.value, pred.rhs.value))
    if pred.op == "and":
        return _implied(pred.lhs, facts, env) and _implied(pred.rhs, facts, env)
    lo, hi = bound(ir.BinOp("-", pred.lhs, pred.rhs, pred.loc), env)
    if pred.op in (">", ">=") and lo is not None:
        return lo > 0 or (pred.op == ">=" and lo >= 0)
    if pred.op in ("<", "<=") and hi is not None:
        return hi < 0 or (pred.op == "<=" and hi <= 0)
    if pred.op == "==" and isinstance(pred.rhs, ir.Const) and pred.rhs.value == 0 and \
            isinstance(pred.lhs, ir.BinOp) and pred.lhs.op == "%" and \
            isinstance(pred.lhs.rhs, ir.Const) and isinstance(pred.lhs.rhs.value, int):
        k = pred.lhs.rhs.value  # `e % k == 0` from a fact `e % m == 0` with k dividing m
        for f in facts:
            f = _fold(f)
            if isinstance(f, ir.BinOp) and f.op == "==" and same_value(f.rhs, pred.rhs) and \
                    isinstance(f.lhs, ir.BinOp) and f.lhs.op == "%" and \
                    same_value(f.lhs.lhs, pred.lhs.lhs) and isinstance(f.lhs.rhs, ir.Const) and \
                    isinstance(f.lhs.rhs.value, int) and k > 0 and f.lhs.rhs.value % k == 0:
                return True
    return False


@dataclasses.dataclass
class _Substitution:
    """Callee names to the caller's: control parameters to expressions, data parameters to
    windows of the caller's buffers, binders to fresh symbols (CALL-2)."""

    controls: dict[ir.Sym, ir.Expr]
    tensors: dict[ir.Sym, ir.Window]
    binders: dict[ir.Sym, ir.Sym]

    def node(self, n: Any) -> Any:
        if isinstance(n, tuple):
            return tuple(self.node(x) for x in n)
        if isinstance(n, ir.Sym):
            return self.binders.get(n, n)
        if isinstance(n, ir.Proc) or not dataclasses.is_dataclass(n) or isinstance(n, type) \
                or type(n).__module__ != ir.__name__:
            return n  # a callee, a stdlib object, a constant value
        if isinstance(n, ir.Var) and n.name in self.controls:
            return self.controls[n.name]
        if isinstance(n, (ir.Read, ir.Assign, ir.Reduce, ir.Window, ir.Stride)) and \
                n.buf in self.tensors:
            return self.data(n)
        if isinstance(n, ir.BarrierRef) and n.buf in self.tensors:
            raise RejectedInput(f"{n.buf.name} is not a barrier", n.loc, rule="CALL-3",
                                code="ERR-P22")
        changes = {f.name: self.node(getattr(n, f.name)) for f in dataclasses.fields(n)
                   if f.name != "loc"}
        return dataclasses.replace(n, **changes)

    def data(self, n: Any) -> Any:
        """A use of a data parameter, moved onto the caller's window."""
        w = self.tensors[n.buf]
        if isinstance(n, ir.Stride):
            dims = [k for k, a in enumerate(w.idx) if isinstance(a, ir.Interval)]
            return ir.Stride(w.buf, dims[n.dim], n.loc)
        inner = list(self.node(n.idx))
        free = [a for a in w.idx if isinstance(a, ir.Interval)]
        if len(inner) != len(free):
            raise RejectedInput(f"{n.buf.name} takes {len(free)} indices here, not "
                                f"{len(inner)}", n.loc, rule="CALL-2", code="ERR-P21",
                                variable=n.buf.name)
        window = isinstance(n, ir.Window)
        idx: list[Any] = []
        for a in w.idx:
            if isinstance(a, ir.Point):
                idx.append(a if window else a.pt)
                continue
            c = inner.pop(0)
            if isinstance(c, ir.Interval):
                idx.append(ir.Interval(_plus(a.lo, c.lo), _plus(a.lo, c.hi), c.loc))
            elif isinstance(c, ir.Point):
                idx.append(ir.Point(_plus(a.lo, c.pt), c.loc))
            else:
                idx.append(_plus(a.lo, c))
        if isinstance(n, ir.Read):
            return ir.Read(w.buf, tuple(idx), n.loc)
        if isinstance(n, ir.Window):
            tmap = n.tensor_map if n.tensor_map is None else \
                (self.binders.get(n.tensor_map[0], n.tensor_map[0]), n.tensor_map[1])
            if tmap is not None and tmap[0] == n.buf and w.tensor_map is not None:
                tmap = w.tensor_map  # a tensor-map parameter: the caller's map (CG-C1)
            return ir.Window(w.buf, tuple(idx), n.loc, tmap or w.tensor_map)
        return dataclasses.replace(n, buf=w.buf, idx=tuple(idx), rhs=self.node(n.rhs))


def _plus(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return _fold(ir.BinOp("+", a, b, getattr(b, "loc", None) or SrcLoc("<call>", 0, 0)))
