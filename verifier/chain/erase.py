"""Erasure: a kernel's sequential reading as an ordinary proc (CHAIN-1).

Reads a parsed kernel (`ir.Proc`) and produces the proc it means when every parallel annotation
is ignored: loop modes become `seq`, device-function and warp blocks are inlined, Fence / Arrive /
Await and barrier allocations are dropped, every memory becomes DRAM (distributed tiles are
ordinary arrays: their distributed dimensions are already array dimensions in the IR), and each
instr call becomes its sequential behaviour (`behaviour`) indexed through the call's windows.
The result holds only seq loops, ifs, allocations, assignments and reductions, so exo-lang's
frontend accepts its text (`exo_text`) and the chain proof (`program`) reads it.

Non-goals: checking the kernel (the S/M proof does that); keeping anything parallel.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator

from verifier.chain.behaviour import BEHAVIOUR_TEXT, NO_BEHAVIOUR, Behaviour, behaviour
from verifier.diagnostics import SrcLoc, UnhandledNode, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.instrs import Instr
from verifier.lang.stdlib.memories import DRAM


class ChainUnsupported(Unsupported):
    """A construct the chain cannot erase or prove about; the reason names it (CHAIN-1.5)."""

    def __init__(self, message: str, loc: SrcLoc | None = None, rule: str = "CHAIN-1.5") -> None:
        super().__init__(message, loc, rule=rule, code="ERR-V11")


def _max_sym_id(p: ir.Proc) -> int:
    best = 0
    stack: list[object] = [p.body, p.args]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.Sym):
            best = max(best, x.id)
        elif isinstance(x, (tuple, list)):
            stack.extend(x)
        elif hasattr(x, "__dataclass_fields__") and not isinstance(x, (Instr,)):
            stack.extend(getattr(x, f) for f in x.__dataclass_fields__ if f != "loc")
    return best


class _Eraser:
    def __init__(self, p: ir.Proc) -> None:
        self.ids = itertools.count(_max_sym_id(p) + 1)

    def fresh(self, name: str) -> ir.Sym:
        return ir.Sym(name, next(self.ids))

    def block(self, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        return tuple(x for s in stmts for x in self.stmt(s))

    def stmt(self, s: ir.Stmt) -> Iterator[ir.Stmt]:
        match s:
            case ir.Alloc(typ=ir.BarrierType()):
                return
            case ir.Alloc():
                yield ir.Alloc(s.name, s.typ, DRAM, s.loc)
            case ir.Assign() | ir.Reduce() | ir.Pass():
                yield s
            case ir.WindowStmt(special=None):
                return  # accesses through the window already name the tensor (parse)
            case ir.WindowStmt():
                raise ChainUnsupported(f"the special window {s.name.name} ({s.special}) has no "
                                       "sequential meaning", s.loc)
            case ir.If():
                yield ir.If(s.cond, self.block(s.body), self.block(s.orelse), s.loc)
            case ir.For():
                yield ir.For(s.iter, s.lo, s.hi, ir.Seq(), self.block(s.body), s.loc)
            case ir.DeviceFunction() | ir.Warps():
                yield from self.block(s.body)
            case ir.Call():
                yield self.call(s)
            case ir.Fence() | ir.Arrive() | ir.Await():
                return
            case _:
                raise UnhandledNode(s)

    def call(self, s: ir.Call) -> ir.Stmt:
        callee = s.callee
        if not isinstance(callee, Instr):
            raise ChainUnsupported(f"a call of proc {callee.name} (only instrs are erased)",
                                   s.loc)
        if callee.name in NO_BEHAVIOUR:
            raise ChainUnsupported(f"{callee.name} has no sequential behaviour: "
                                   f"{NO_BEHAVIOUR[callee.name]}", s.loc)
        if callee.name not in BEHAVIOUR_TEXT:
            raise ChainUnsupported(f"no sequential behaviour is recorded for {callee.name} "
                                   "(verifier/chain/behaviour.py)", s.loc)
        beh = behaviour(callee.name)
        args = {prm.name: a for prm, a in zip(callee.params, s.args, strict=True)}
        kwargs = dict(s.kwargs)
        loop_syms = {name: self.fresh(name) for name, _ in beh.loops}
        body: ir.Stmt = self.behaviour_stmt(beh, args, loop_syms, s.loc)
        for name, extent in reversed(beh.loops):
            hi = self.extent(extent, kwargs, args, s.loc)
            body = ir.For(loop_syms[name], ir.Const(0, s.loc), hi, ir.Seq(), (body,), s.loc)
        return body

    @staticmethod
    def extent(text: str, kwargs: dict[str, object], args: dict[str, ir.Expr],
               loc: SrcLoc) -> ir.Expr:
        if text.isdigit():
            return ir.Const(int(text), loc)
        if text in kwargs:
            return ir.Const(int(kwargs[text]), loc)  # type: ignore[arg-type]
        return args[text]

    def behaviour_stmt(self, beh: Behaviour, args: dict[str, ir.Expr],
                       loops: dict[str, ir.Sym], loc: SrcLoc) -> ir.Stmt:
        def index(param: str, idx: tuple[ir.Expr, ...]) -> tuple[ir.Sym, tuple[ir.Expr, ...]]:
            win = args[param]
            if not isinstance(win, ir.Window):
                raise ChainUnsupported(f"instr argument {param} is not a tensor window", loc)
            inner = iter(idx)
            out: list[ir.Expr] = []
            for a in win.idx:
                if isinstance(a, ir.Point):
                    out.append(a.pt)
                else:
                    out.append(ir.BinOp("+", a.lo, next(inner), loc))
            return win.buf, tuple(out)

        def expr(node: ast.expr) -> ir.Expr:
            match node:
                case ast.Constant(value=v):
                    return ir.Const(v, loc)
                case ast.Name(id=n):
                    return ir.Var(loops[n], loc)
                case ast.Subscript(value=ast.Name(id=param), slice=sl):
                    parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
                    buf, idx = index(param, tuple(expr(x) for x in parts))
                    return ir.Read(buf, idx, loc)
                case ast.BinOp(left=l, op=op, right=r):
                    ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
                    return ir.BinOp(ops[type(op)], expr(l), expr(r), loc)
            raise UnhandledNode(node)

        buf, idx = index(beh.lhs, tuple(ir.Var(loops[i], loc) for i in beh.lhs_idx))
        rhs = expr(beh.rhs)
        return ir.Reduce(buf, idx, rhs, loc) if beh.reduce else ir.Assign(buf, idx, rhs, loc)


def erase(p: ir.Proc) -> ir.Proc:
    """The sequential reading of kernel `p` as a proc of seq loops over DRAM arrays.
    Rules: CHAIN-1.1, CHAIN-1.2, CHAIN-1.3, CHAIN-1.4"""
    for a in p.args:
        if isinstance(a.typ, ir.Tensor) and a.typ.window:
            raise ChainUnsupported(f"window argument {a.name.name}", a.loc)
    args = tuple(ir.Arg(a.name, a.typ, DRAM if isinstance(a.typ, ir.Tensor) else a.mem, a.loc)
                 for a in p.args)
    return ir.Proc(p.name, args, p.preds, _Eraser(p).block(p.body), p.loc, p.source_lines)
