"""Python AST of an `@proc` function → IR (stage P, language.md §2-5).

Reads the function's source; Python-evaluated positions (LANG-2.2: memories, units, `with`
contexts, sync-tl arguments, Await N, instr keywords, free integer names) are evaluated in the
function's globals and closure. Windows are resolved here: an access through a window name is
rewritten to its underlying tensor with offset indices (SEM-4.2, "redirected").

Expression statements, barrier declarations and barrier expressions are parsed by
`parse_sync`. One stage-A rule is checked here because only the parse sees window names: a window
of a grid constant used inside a `CudaDeviceFunction` it was not created in (ERR-A15, LANG-6.2).

Non-goals: collective analysis, permissions and every later static stage (verifier.collectives,
verifier.check.static); the parse only enforces what the syntax itself fixes.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from verifier.diagnostics import RejectedInput, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.parse import dialect, parse_ring, parse_sync
from verifier.lang.stdlib import dialects
from verifier.lang.parse.definition import find_definition
from verifier.lang.stdlib.config import CudaDeviceFunction, CudaWarps
from verifier.lang.stdlib.memories import (
    DRAM, BarrierMechanism, CudaGmemLinear, Memory, SpecialWindow,
)
from verifier.lang.parse.parse_sync import OTHER_DIALECT as _OTHER_DIALECT
from verifier.lang.stdlib.endgame import MechanismSpelling
from verifier.lang.stdlib.scalars import ScalarInfo
from verifier.lang.stdlib.units import CollUnit, cuda_thread

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}
_CMPOPS = {ast.Lt: "<", ast.Gt: ">", ast.LtE: "<=", ast.GtE: ">=", ast.Eq: "=="}
_LOOP_MODES = ("seq", "par", "cuda_tasks", "cuda_threads")


@dataclass
class _Binding:
    sym: ir.Sym
    kind: str  # control | data | barrier | window
    typ: Any = None
    mem: Any = None
    # for windows: base symbol and per-base-dimension (is_point, offset expr)
    base: ir.Sym | None = None
    dims: tuple[tuple[bool, ir.Expr], ...] = ()
    device_depth: int = 0  # CudaDeviceFunction nesting where the name was bound
    tensor_map: tuple[ir.Sym, Any] | None = None  # a window taken through Sm90_tensorMap


@dataclass
class _Scope:
    names: dict[str, _Binding] = field(default_factory=dict)


class ProcParser:
    """One parse of one `@proc` function."""

    def __init__(self, fn: Callable[..., Any],
                 defining_locals: dict[str, Any] | None = None) -> None:
        self.fn = fn
        self.definition = find_definition(fn)
        self.source_lines = self.definition.lines
        self.file = self.definition.file
        self.tree = ast.Module(body=[self.definition.node], type_ignores=[])
        closure = inspect.getclosurevars(fn)
        # LANG-2.2: what upstream sees where the proc is defined: globals, then the defining
        # function's locals (names used only in annotations or `with` arguments are not in
        # the closure under postponed annotations), then the closure.
        self.py_env: dict[str, Any] = {**fn.__globals__, **(defining_locals or {}),
                                       **closure.nonlocals}
        self.scopes: list[_Scope] = [_Scope()]
        self.device_depth = 0
        self.dialect_notes = dialect.DialectNotes()  # DIAL-1
        self.from_window: RejectedInput | None = None  # a tensor map of a window (DIAL-15)

    # ------------------------------------------------------------ helpers

    def loc(self, node: ast.AST) -> SrcLoc:
        return self.definition.loc(node)

    def err(self, node: ast.AST, msg: str, code: str, rule: str = "") -> RejectedInput:
        return RejectedInput(msg, self.loc(node), rule=rule, code=code)

    def py_eval(self, node: ast.expr) -> Any:
        """Evaluate a Python-evaluated position (LANG-2.2) in the proc's globals + closure."""
        try:
            code = compile(ast.Expression(body=node), self.file, "eval")
            return eval(code, dict(self.py_env))  # noqa: S307 - user's own file, LANG-2.2
        except RejectedInput as e:
            raise RejectedInput(e.message, self.loc(node), e.rule, e.code) from None
        except Unsupported as e:  # an upstream name spork-verify does not serve (ERR-V11)
            raise Unsupported(e.message, self.loc(node), e.rule, e.code) from None
        except Exception as e:  # a user's Python error in a Python-evaluated position
            raise self.err(node, f"could not evaluate `{ast.unparse(node)}`: {e}",
                           "ERR-P09") from None

    def lookup(self, name: str) -> _Binding | None:
        for scope in reversed(self.scopes):
            if name in scope.names:
                return scope.names[name]
        return None

    def bind(self, name: str, binding: _Binding) -> None:
        binding.device_depth = self.device_depth
        self.scopes[-1].names[name] = binding

    def check_grid_constant_window(self, name: str, b: _Binding, node: ast.AST) -> None:
        """A window of a grid constant may not flow into CUDA code (ERR-A15). Rules: LANG-6.2"""
        is_window = b.kind == "window" or (isinstance(b.typ, ir.Tensor) and b.typ.window)
        if is_window and getattr(b.mem, "family", "") == "grid_constant" \
                and self.device_depth > b.device_depth:
            raise self.err(node, f"grid constant parameter {name} cannot be a window", "ERR-A15",
                           "LANG-6.2")

    # ------------------------------------------------------------ entry

    def parse(self) -> ir.Proc:
        fdef = self.tree.body[0]
        if not isinstance(fdef, ast.FunctionDef):
            raise self.err(fdef, "@proc must decorate a function definition", "ERR-P05")
        dialect.scan(fdef, self.loc, self.dialect_notes)
        self.dialect_notes.decide(fdef.name, self.file)  # a mix in the text: before any parse
        args = tuple(self.parse_arg(a) for a in fdef.args.args)
        body = list(fdef.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # docstring
        preds: list[ir.Expr] = []
        while body and isinstance(body[0], ast.Assert):
            preds.append(self.expr(body[0].test))
            body = body[1:]
        for stmt in body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Assert):
                    raise self.err(sub, "predicate assert should happen at the beginning of a "
                                   "function", "ERR-P20", "LANG-2.5")
        stmts = self.block(body)
        found = self.dialect_notes.decide(fdef.name, self.file)
        if self.from_window is not None and found == dialects.SPORK26:
            raise self.from_window
        return ir.Proc(fdef.name, args, tuple(preds), stmts, self.loc(fdef), self.source_lines,
                       found)

    # ------------------------------------------------------------ arguments and types

    def parse_arg(self, a: ast.arg) -> ir.Arg:
        if a.annotation is None:
            raise self.err(a, f"argument {a.arg} needs a type annotation", "ERR-P11", "LANG-2.3")
        typ_node, mem_node = a.annotation, None
        if isinstance(typ_node, ast.BinOp) and isinstance(typ_node.op, ast.MatMult):
            typ_node, mem_node = typ_node.left, typ_node.right
        sym = ir.Sym.fresh(a.arg)
        if isinstance(typ_node, ast.Name) and typ_node.id in ir.CONTROL_KINDS:
            if mem_node is not None:
                raise self.err(a, f"control type {typ_node.id} cannot have @", "ERR-P26",
                               "LANG-2.3")
            self.bind(a.arg, _Binding(sym, "control", ir.Control(typ_node.id)))
            return ir.Arg(sym, ir.Control(typ_node.id), None, self.loc(a))
        if isinstance(typ_node, ast.Name) and typ_node.id == "barrier":
            raise self.err(a, "barrier argument not allowed", "ERR-P26", "LANG-2.3")
        typ = self.data_type(typ_node, allow_window=True)
        special = self.py_eval(mem_node) if mem_node is not None else None
        tmap = None
        if isinstance(special, SpecialWindow) and isinstance(typ, ir.Tensor) and typ.window:
            # LANG-3.4: a tensor map the caller built over GMEM; windows of it carry the map
            mem, tmap = CudaGmemLinear, (sym, special)
        else:
            mem = self.memory(mem_node) if mem_node is not None else DRAM
        if not isinstance(mem, Memory):
            raise self.err(mem_node or a, f"annotation @ {ast.unparse(mem_node)} needs to be "
                           "subclass of Memory or SpecialWindow", "ERR-P11", "LANG-2.3")
        self.bind(a.arg, _Binding(sym, "data", typ, mem, tensor_map=tmap))
        return ir.Arg(sym, typ, mem, self.loc(a), tmap[1] if tmap is not None else None)

    def scalar_name(self, node: ast.expr) -> str | None:
        """The element type a name denotes: a type keyword (`f32`), or a Python value that is
        one (`my_f16 = f16`, upstream's `exo.scalars`). LANG-2.4"""
        if not isinstance(node, ast.Name):
            return None
        if node.id in ir.SCALAR_TYPES:
            return node.id
        if self.lookup(node.id) is None and node.id in self.py_env:
            name = getattr(self.py_env[node.id], "name", None)
            if isinstance(self.py_env[node.id], ScalarInfo) and name in ir.SCALAR_TYPES:
                return name
        return None

    def data_type(self, node: ast.expr, allow_window: bool = False) -> ir.Scalar | ir.Tensor:
        if (name := self.scalar_name(node)) is not None:
            return ir.Scalar(name)
        if isinstance(node, ast.Subscript):
            base, window = node.value, False
            if isinstance(base, ast.List) and allow_window and len(base.elts) == 1:
                base, window = base.elts[0], True
            if (name := self.scalar_name(base)) is not None:
                dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                return ir.Tensor(name, tuple(self.expr(d) for d in dims), window)
        raise self.err(node, f"expected a data type such as f32 or f32[n], not "
                       f"`{ast.unparse(node)}`", "ERR-P11", "LANG-2.4")

    def memory(self, node: ast.expr) -> Any:
        value = self.py_eval(node)
        if isinstance(value, (Memory, BarrierMechanism, MechanismSpelling)):
            return value
        raise self.err(node, f"expected @X annotation to subclass BarrierMechanism/Memory, not "
                       f"{ast.unparse(node)} = {value}", "ERR-P19", "LANG-3.1")

    def note_dialect(self, dialect_name: str, construct: str, node: ast.AST) -> None:
        """Evidence of the proc's dialect from a value the parse evaluated (DIAL-1)."""
        self.dialect_notes.note(dialect_name, construct, self.loc(node))

    # ------------------------------------------------------------ statements

    def block(self, stmts: list[ast.stmt]) -> tuple[ir.Stmt, ...]:
        self.scopes.append(_Scope())
        try:
            out: list[ir.Stmt] = []
            for s in stmts:
                taken = self.python_if(s)
                out.extend(self.block(taken) if taken is not None else (self.stmt(s),))
            return tuple(out)
        finally:
            self.scopes.pop()

    def python_if(self, s: ast.stmt) -> list[ast.stmt] | None:
        """The branch taken by an `if` whose test is a Python value (no name of the proc in
        it), folded at parse time as upstream folds it (LANG-2.2); None for a proc-level `if`."""
        if not isinstance(s, ast.If):
            return None
        names = [n.id for n in ast.walk(s.test) if isinstance(n, ast.Name)]
        if any(self.lookup(n) is not None or n not in self.py_env for n in names):
            return None
        value = self.py_eval(s.test)
        if not isinstance(value, (bool, int)):
            raise self.err(s.test, f"the condition `{ast.unparse(s.test)}` is a Python "
                           f"{type(value).__name__}, not a bool", "ERR-P09", "LANG-2.2")
        return s.body if value else s.orelse

    def stmt(self, s: ast.stmt) -> ir.Stmt:
        loc = self.loc(s)
        match s:
            case ast.Pass():
                return ir.Pass(loc)
            case ast.AnnAssign(target=ast.Name(id=name), annotation=ann, value=None):
                return self.alloc(name, ann, s)
            case ast.Assign(targets=[target], value=value):
                return self.assign(target, value, s)
            case ast.AugAssign(target=target, op=ast.Add(), value=value):
                buf, idx = self.lvalue(target)
                return ir.Reduce(buf, idx, self.expr(value), loc)
            case ast.AugAssign():
                raise self.err(s, "only += is supported as a reduction", "ERR-P25", "LANG-3.2")
            case ast.For():
                return self.for_loop(s)
            case ast.If(test=test, body=body, orelse=orelse):
                return ir.If(self.expr(test), self.block(body), self.block(orelse), loc)
            case ast.With():
                return self.with_stmt(s)
            case ast.Expr(value=value):
                return self.expr_stmt(value, s)
            case _:
                raise self.err(s, f"unsupported statement `{type(s).__name__}`", "ERR-P01",
                               "LANG-3.5")

    def alloc(self, name: str, ann: ast.expr, s: ast.stmt) -> ir.Stmt:
        typ_node, mem_node = ann, None
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.MatMult):
            typ_node, mem_node = ann.left, ann.right
        sym = ir.Sym.fresh(name)
        if parse_sync.is_barrier_type(typ_node):
            btype = parse_sync.barrier_type(self, name, typ_node, s, mem_node)
            self.bind(name, _Binding(sym, "barrier", btype, btype.mech))
            return ir.Alloc(sym, btype, btype.mech, self.loc(s))
        typ = parse_ring.data_type(self, typ_node) or self.data_type(typ_node)
        mem = self.memory(mem_node) if mem_node is not None else DRAM
        if not isinstance(mem, Memory):
            raise self.err(mem_node or s, f"{name}: expected @X annotation to subclass Memory, "
                           f"not {mem}", "ERR-P19", "LANG-3.1")
        self.bind(name, _Binding(sym, "data", typ, mem))
        return ir.Alloc(sym, typ, mem, self.loc(s))

    def assign(self, target: ast.expr, value: ast.expr, s: ast.stmt) -> ir.Stmt:
        loc = self.loc(s)
        if isinstance(target, ast.Name) and self.lookup(target.id) is None:
            return self.window_stmt(target.id, value, s)
        buf, idx = self.lvalue(target)
        return ir.Assign(buf, idx, self.expr(value), loc)

    def window_stmt(self, name: str, value: ast.expr, s: ast.stmt) -> ir.Stmt:
        special = None
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.MatMult):
            special = self.py_eval(value.right)
            if not isinstance(special, SpecialWindow):
                raise self.err(value.right, f"@ {ast.unparse(value.right)} in a window statement "
                               f"must be a SpecialWindow such as Sm90_tensorMap(...), not "
                               f"{special!r}", "ERR-P24", "LANG-3.4")
            value = value.left
        if not isinstance(value, (ast.Subscript, ast.Name)):
            raise self.err(s, f"cannot assign to undeclared name {name}; declare it first "
                           f"(`{name}: f32 @ CudaRmem`)", "ERR-P24", "LANG-3.3")
        if special is not None:  # LANG-3.4: only from a dense tensor
            src = value.value if isinstance(value, ast.Subscript) else value
            src_b = self.lookup(src.id) if isinstance(src, ast.Name) else None
            if src_b is not None and (src_b.kind == "window" or (
                    isinstance(src_b.typ, ir.Tensor) and src_b.typ.window)) \
                    and self.from_window is None:  # February's rule only (DIAL-15)
                self.from_window = self.err(
                    value, f"{special} must be created from a dense tensor, not another window "
                    f"({ast.unparse(src)})", "ERR-P24", "LANG-3.4")
        window = self.window(value)
        base = self.lookup(window.buf.name)
        assert base is not None
        sym = ir.Sym.fresh(name)
        dims = tuple((isinstance(a, ir.Point), a.pt if isinstance(a, ir.Point) else a.lo)
                     for a in window.idx)
        shape = tuple(self.sub(a.hi, a.lo, a.loc) for a in window.idx if isinstance(a, ir.Interval))
        base_typ = base.typ
        typ = ir.Tensor(ir.element_type(base_typ) or "f32", shape, True)
        # a window of a window keeps the tensor map it was taken through (DIAL-15)
        tmap = (sym, special) if special is not None else window.tensor_map
        self.bind(name, _Binding(sym, "window", typ, base.mem, window.buf, dims,
                                 tensor_map=tmap))
        return ir.WindowStmt(sym, window, special, self.loc(s))

    def lvalue(self, target: ast.expr) -> tuple[ir.Sym, tuple[ir.Expr, ...]]:
        if isinstance(target, ast.Name):
            read = self.data_access(target.id, [], target)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            read = self.data_access(target.value.id, self.subscripts(target), target)
        else:
            raise self.err(target, f"cannot assign to `{ast.unparse(target)}`", "ERR-P01",
                           "LANG-3.2")
        if not isinstance(read, ir.Read):
            raise self.err(target, f"cannot assign to a window `{ast.unparse(target)}`",
                           "ERR-P24", "LANG-3.2")
        return read.buf, read.idx

    def for_loop(self, s: ast.For) -> ir.Stmt:
        if not isinstance(s.target, ast.Name):
            raise self.err(s.target, "loop variable must be a name", "ERR-P10", "LANG-3.5")
        it = s.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)):
            raise self.err(it, f"unknown loop mode `{ast.unparse(it)}`", "ERR-P10", "LANG-3.5")
        mode_name = it.func.id
        if mode_name not in _LOOP_MODES:
            raise self.err(it, f"unknown loop mode name {mode_name}", "ERR-P10", "LANG-3.5")
        if len(it.args) != 2:
            raise self.err(it, f"{mode_name} expects exactly 2 positional arguments: lo, hi",
                           "ERR-P10", "LANG-3.5")
        kwargs = {k.arg: k.value for k in it.keywords}
        allowed = {"seq": {"pragma_unroll"}, "cuda_threads": {"unit"}}.get(mode_name, set())
        for k, v in kwargs.items():
            if k not in allowed:
                raise self.err(v, f"failed to construct loop mode {mode_name}: unknown keyword "
                               f"{k}", "ERR-P10", "LANG-3.5")
        mode: ir.LoopMode
        if mode_name == "seq":
            unroll = self.py_eval(kwargs["pragma_unroll"]) if "pragma_unroll" in kwargs else None
            mode = ir.Seq(unroll)
        elif mode_name == "par":
            mode = ir.Par()
        elif mode_name == "cuda_tasks":
            mode = ir.CudaTasks()
        else:
            unit = self.py_eval(kwargs["unit"]) if "unit" in kwargs else cuda_thread
            if not isinstance(unit, CollUnit):
                raise self.err(kwargs["unit"], f"failed to construct loop mode cuda_threads: "
                               f"unit must be a CollUnit, not {unit!r}", "ERR-P10", "LANG-3.5")
            mode = ir.CudaThreads(unit)
        lo, hi = self.expr(it.args[0]), self.expr(it.args[1])
        sym = ir.Sym.fresh(s.target.id)
        self.scopes.append(_Scope())
        try:
            self.bind(s.target.id, _Binding(sym, "control", ir.Control("index")))
            body = self.block(s.body)
        finally:
            self.scopes.pop()
        if s.orelse:
            raise self.err(s, "for-else is not supported", "ERR-P10", "LANG-3.5")
        return ir.For(sym, lo, hi, mode, body, self.loc(s))

    def with_stmt(self, s: ast.With) -> ir.Stmt:
        if len(s.items) != 1 or s.items[0].optional_vars is not None:
            raise self.err(s, "expected only 1 withitem", "ERR-P08", "LANG-4.4")
        ctx_node = s.items[0].context_expr
        if isinstance(ctx_node, ast.Call) and isinstance(ctx_node.func, ast.Name) \
                and ctx_node.func.id in _OTHER_DIALECT:
            raise self.err(ctx_node, f"{ctx_node.func.id} is not part of the spork26 dialect; "
                           f"{_OTHER_DIALECT[ctx_node.func.id]}", "ERR-P28", "LANG-1.2")
        ctx = self.py_eval(ctx_node)
        if isinstance(ctx, CudaDeviceFunction):
            self.device_depth += 1
            try:
                body = self.block(s.body)
            finally:
                self.device_depth -= 1
            return ir.DeviceFunction(ctx, body, self.loc(s))
        body = self.block(s.body)
        if isinstance(ctx, CudaWarps):
            return ir.Warps(ctx, body, self.loc(s))
        raise self.err(ctx_node, f"Unsupported context type for with: {type(ctx).__name__}",
                       "ERR-P09", "LANG-4.4")

    def expr_stmt(self, value: ast.expr, s: ast.stmt) -> ir.Stmt:
        return parse_sync.expr_stmt(self, value, s)

    # ------------------------------------------------------------ expressions

    def expr(self, node: ast.expr) -> ir.Expr:
        loc = self.loc(node)
        match node:
            case ast.Constant(value=value) if isinstance(value, (int, float)) and \
                    not isinstance(value, bool) or isinstance(value, bool):
                return ir.Const(value, loc)
            case ast.Name(id=name):
                return self.name_expr(name, node)
            case ast.Subscript(value=ast.Name(id=name)):
                if self.has_slices(node):
                    return self.window(node)
                return self.data_access(name, self.subscripts(node), node)
            case ast.BinOp(op=ast.MatMult()):
                raise self.err(node, "Can only create SpecialWindow as part of WindowStmt "
                               f"(`w = {ast.unparse(node)}`)", "ERR-P24", "LANG-3.4")
            case ast.BinOp(op=op, left=lhs, right=rhs) if type(op) in _BINOPS:
                return ir.BinOp(_BINOPS[type(op)], self.expr(lhs), self.expr(rhs), loc)
            case ast.BinOp(op=op):
                raise self.err(node, f"unsupported binary operator {type(op).__name__}",
                               "ERR-P25", "LANG-2.6")
            case ast.Compare(left=lhs, ops=[op], comparators=[rhs]) if type(op) in _CMPOPS:
                return ir.BinOp(_CMPOPS[type(op)], self.expr(lhs), self.expr(rhs), loc)
            case ast.Compare():
                raise self.err(node, "unsupported binary operator in comparison (use <, >, <=, "
                               ">=, == one at a time)", "ERR-P25", "LANG-2.6")
            case ast.BoolOp(op=op, values=values):
                word = "and" if isinstance(op, ast.And) else "or"
                result = self.expr(values[0])
                for v in values[1:]:
                    result = ir.BinOp(word, result, self.expr(v), loc)
                return result
            case ast.UnaryOp(op=ast.USub(), operand=operand):
                return ir.USub(self.expr(operand), loc)
            case ast.UnaryOp(op=op):
                raise self.err(node, f"unsupported unary operator {type(op).__name__}",
                               "ERR-P25", "LANG-2.6")
            case ast.Call(func=ast.Name(id="stride"), args=[ast.Name(id=buf), dim]):
                b = self.lookup(buf)
                if b is None:
                    raise self.err(node, f"unknown name {buf}", "ERR-P05", "LANG-2.6")
                d = int(self.py_eval(dim))
                if b.kind == "data" and isinstance(b.typ, ir.Tensor) and not b.typ.window \
                        and 0 <= d < len(b.typ.shape):
                    return ir.dense_stride(b.typ.shape[d + 1:], loc)
                return ir.Stride(b.sym, d, loc)
            case _:
                raise self.err(node, f"unsupported expression `{ast.unparse(node)}`", "ERR-P25",
                               "LANG-2.6")

    def name_expr(self, name: str, node: ast.expr) -> ir.Expr:
        b = self.lookup(name)
        loc = self.loc(node)
        if b is None:
            if name in self.py_env:
                value = self.py_env[name]
                if isinstance(value, float) and value.is_integer():
                    value = int(value)  # `N1 / Nw` computed in Python: upstream accepts 4.0
                if isinstance(value, (int, float)):  # bools too (LANG-2.2)
                    return ir.Const(value, loc)
            raise self.err(node, f"unknown name {name}", "ERR-P05", "LANG-2.2")
        if b.kind == "control":
            return ir.Var(b.sym, loc)
        if b.kind == "barrier":
            raise self.err(node, f"barrier {name} used as a value", "ERR-P22", "LANG-5.4")
        return self.data_access(name, [], node)

    @staticmethod
    def has_slices(node: ast.Subscript) -> bool:
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return any(isinstance(e, ast.Slice) for e in elts)

    def subscripts(self, node: ast.Subscript) -> list[ast.expr]:
        return list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]

    def data_access(self, name: str, idx_nodes: list[ast.expr], node: ast.expr) -> ir.Expr:
        b = self.lookup(name)
        loc = self.loc(node)
        if b is None or b.kind not in ("data", "window"):
            raise self.err(node, f"unknown data variable {name}", "ERR-P05", "LANG-2.2")
        self.check_grid_constant_window(name, b, node)
        idx = [self.expr(i) for i in idx_nodes]
        if b.kind == "window":
            assert b.base is not None
            full: list[ir.Expr] = []
            it = iter(idx)
            for is_point, off in b.dims:
                full.append(off if is_point else self.add(off, next(it, ir.Const(0, loc)), loc))
            return ir.Read(b.base, tuple(full), loc)
        return ir.Read(b.sym, tuple(idx), loc)

    def access(self, node: ast.expr) -> ir.Access:
        loc = self.loc(node)
        if isinstance(node, ast.Slice):
            if node.step is not None:
                raise self.err(node, "slices with a step are not supported", "ERR-P25",
                               "LANG-3.3")
            lo = self.expr(node.lower) if node.lower is not None else ir.Const(0, loc)
            hi = self.expr(node.upper) if node.upper is not None else None
            return ir.Interval(lo, hi if hi is not None else ir.Const(-1, loc), loc)
        return ir.Point(self.expr(node), loc)

    def window(self, node: ast.expr) -> ir.Window:
        loc = self.loc(node)
        name_node = node.value if isinstance(node, ast.Subscript) else node
        assert isinstance(name_node, ast.Name)
        b = self.lookup(name_node.id)
        if b is None or b.kind not in ("data", "window"):
            raise self.err(node, f"unknown data variable {name_node.id}", "ERR-P05", "LANG-3.3")
        self.check_grid_constant_window(name_node.id, b, node)
        idx_nodes = self.subscripts(node) if isinstance(node, ast.Subscript) else []
        accesses = [self.access(i) for i in idx_nodes]
        shape = b.typ.shape if isinstance(b.typ, ir.Tensor) else ()
        while len(accesses) < len(shape):  # x[i] ≡ x[i, :]  (LANG-3.3)
            accesses.append(ir.Interval(ir.Const(0, loc), ir.Const(-1, loc), loc))
        accesses = [self.close_interval(a, shape[k]) for k, a in enumerate(accesses)]
        if b.kind == "window":
            assert b.base is not None
            composed: list[ir.Access] = []
            it = iter(accesses)
            for is_point, off in b.dims:
                if is_point:
                    composed.append(ir.Point(off, loc))
                    continue
                a = next(it)
                if isinstance(a, ir.Point):
                    composed.append(ir.Point(self.add(off, a.pt, loc), loc))
                else:
                    composed.append(ir.Interval(self.add(off, a.lo, loc),
                                                self.add(off, a.hi, loc), loc))
            return ir.Window(b.base, tuple(composed), loc, b.tensor_map)
        return ir.Window(b.sym, tuple(accesses), loc, b.tensor_map)

    @staticmethod
    def close_interval(a: ir.Access, extent: ir.Expr) -> ir.Access:
        if isinstance(a, ir.Interval) and isinstance(a.hi, ir.Const) and a.hi.value == -1:
            return ir.Interval(a.lo, extent, a.loc)
        return a

    @staticmethod
    def add(a: ir.Expr, b: ir.Expr, loc: SrcLoc) -> ir.Expr:
        if isinstance(a, ir.Const) and a.value == 0:
            return b
        if isinstance(b, ir.Const) and b.value == 0:
            return a
        return ir.BinOp("+", a, b, loc)

    @staticmethod
    def sub(a: ir.Expr, b: ir.Expr, loc: SrcLoc) -> ir.Expr:
        if isinstance(b, ir.Const) and b.value == 0:
            return a
        return ir.BinOp("-", a, b, loc)
