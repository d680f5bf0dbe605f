"""A sequential proc as statement instances over quasi-affine domains (CHAIN-2).

Reads an erased or reference proc (seq loops, ifs, allocations, assignments, reductions) and
produces, for every assignment and reduction, its iterators, its domain (loop bounds and
guards), its position in the sequential order (a 2d+1 schedule vector), the element it writes
and the expression it stores with every read as an element access. An element of an allocation
is named by the iterators of the loops around the allocation followed by its index, so each
execution of an allocation is a buffer of its own.

Anything outside quasi-affine indexing (a data-dependent index or guard, a product of two
iterators, division by a non-constant) raises `ChainUnsupported` naming it (CHAIN-2.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verifier.chain.erase import ChainUnsupported
from verifier.chain.presburger import (
    TRUE, Aff, Formula, conj, disj, eq, ge, le, lt, neg)
from verifier.diagnostics import SrcLoc, UnhandledNode
from verifier.lang.ir import ir


@dataclass(frozen=True, slots=True)
class Access:
    """Element `index` of buffer `buf` (allocation prefix included)."""

    buf: str
    index: tuple[Aff, ...]
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class VConst:
    value: float


@dataclass(frozen=True, slots=True)
class VRead:
    access: Access


@dataclass(frozen=True, slots=True)
class VBin:
    op: str  # + - * /
    lhs: "Value"
    rhs: "Value"


@dataclass(frozen=True, slots=True)
class VNeg:
    arg: "Value"


Value = VConst | VRead | VBin | VNeg


@dataclass(frozen=True, slots=True)
class Stmt:
    """One assignment or reduction; its instances are the integer points of `domain`."""

    id: int
    reduce: bool
    iters: tuple[str, ...]
    domain: Formula
    sched: tuple[Aff, ...]  # padded to the program's schedule length
    write: Access
    rhs: Value
    loc: SrcLoc = field(compare=False)
    iter_names: tuple[str, ...] = ()  # display names of `iters`


@dataclass(frozen=True, slots=True)
class Buffer:
    key: str
    name: str  # display name
    is_arg: bool
    shape: tuple[Aff, ...]
    prefix: tuple[str, ...]  # iterators of the loops around the allocation


@dataclass(frozen=True)
class Program:
    name: str
    params: tuple[str, ...]  # size arguments, by name
    context: Formula  # the asserts, and every size >= 1
    buffers: dict[str, Buffer]
    stmts: tuple[Stmt, ...]
    sched_len: int
    end_pos: int  # schedule position after the last statement
    arg_order: tuple[str, ...]  # argument names in order
    loc: SrcLoc

    def end_sched(self) -> tuple[Aff, ...]:
        return (Aff.num(self.end_pos),) + (Aff.num(0),) * (self.sched_len - 1)

    def writers(self, buf: str, reduce: bool) -> list[Stmt]:
        return [s for s in self.stmts if s.write.buf == buf and s.reduce == reduce]

    def outputs(self) -> list[str]:
        return [k for k in self.arg_order if any(s.write.buf == k for s in self.stmts)]


def _int_const(e: ir.Expr) -> int | None:
    if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    if isinstance(e, ir.Const) and isinstance(e.value, float) and e.value.is_integer():
        return int(e.value)
    return None


class _Flattener:
    def __init__(self, p: ir.Proc) -> None:
        self.p = p
        self.names: dict[ir.Sym, str] = {}
        self.display: dict[str, str] = {}
        self.buffers: dict[str, Buffer] = {}
        self.raw: list[tuple[bool, tuple[str, ...], Formula, list[Aff], Access, Value,
                             SrcLoc]] = []
        self.params: list[str] = []
        for a in p.args:
            if isinstance(a.typ, ir.Control):
                if a.typ.kind not in ("size", "index"):
                    raise ChainUnsupported(f"{a.typ.kind} argument {a.name.name}", a.loc)
                self.names[a.name] = a.name.name
                self.params.append(a.name.name)
            elif isinstance(a.typ, ir.Tensor) or isinstance(a.typ, ir.Scalar):
                shape = a.typ.shape if isinstance(a.typ, ir.Tensor) else ()
                self.buffers[a.name.name] = Buffer(
                    a.name.name, a.name.name, True, tuple(self.aff(d) for d in shape), ())
                self.names[a.name] = a.name.name
            else:
                raise ChainUnsupported(f"argument {a.name.name} of type {a.typ}", a.loc)

    def var_name(self, sym: ir.Sym) -> str:
        if sym not in self.names:
            name = f"{sym.name}_{sym.id}"
            self.names[sym] = name
            self.display[name] = sym.name
        return self.names[sym]

    def aff(self, e: ir.Expr) -> Aff:
        match e:
            case ir.Const():
                v = _int_const(e)
                if v is None:
                    raise ChainUnsupported(f"non-integer {e.value!r} in an index", e.loc,
                                           "CHAIN-2.4")
                return Aff.num(v)
            case ir.Var(name=n):
                if n not in self.names:
                    raise ChainUnsupported(f"unknown control value {n.name}", e.loc, "CHAIN-2.4")
                return Aff.var(self.names[n])
            case ir.USub(arg=a):
                return -self.aff(a)
            case ir.BinOp(op="+" | "-", lhs=l, rhs=r):
                return self.aff(l) + self.aff(r) if e.op == "+" else self.aff(l) - self.aff(r)
            case ir.BinOp(op="*", lhs=l, rhs=r):
                a, b = self.aff(l), self.aff(r)
                if a.is_const():
                    return b.scale(a.const)
                if b.is_const():
                    return a.scale(b.const)
            case ir.BinOp(op="/" | "%", lhs=l, rhs=r):
                d = self.aff(r)
                if d.is_const() and d.const > 0:
                    a = self.aff(l)
                    return a.floordiv(d.const) if e.op == "/" else a.mod(d.const)
        raise ChainUnsupported("an index or guard that is not quasi-affine (sums of iterators "
                               "and sizes times constants, / and % by positive constants)",
                               getattr(e, "loc", None), "CHAIN-2.4")

    def cond(self, e: ir.Expr) -> Formula:
        match e:
            case ir.Const(value=bool() as v):
                return TRUE if v else neg(TRUE)
            case ir.BinOp(op="and", lhs=l, rhs=r):
                return conj([self.cond(l), self.cond(r)])
            case ir.BinOp(op="or", lhs=l, rhs=r):
                return disj([self.cond(l), self.cond(r)])
            case ir.BinOp(op="<" | "<=" | ">" | ">=" | "==", lhs=l, rhs=r):
                a, b = self.aff(l), self.aff(r)
                return {"<": lt, "<=": le, ">": lambda x, y: lt(y, x),
                        ">=": ge, "==": eq}[e.op](a, b)
        raise ChainUnsupported("a guard that is not a comparison of quasi-affine terms",
                               getattr(e, "loc", None), "CHAIN-2.4")

    def value(self, e: ir.Expr, prefix: dict[str, tuple[str, ...]]) -> Value:
        match e:
            case ir.Const(value=v):
                return VConst(float(v))
            case ir.Read(buf=b, idx=idx):
                return VRead(self.access(b, idx, e.loc))
            case ir.USub(arg=a):
                return VNeg(self.value(a, prefix))
            case ir.BinOp(op="+" | "-" | "*" | "/", lhs=l, rhs=r):
                return VBin(e.op, self.value(l, prefix), self.value(r, prefix))
            case ir.Var(name=n):
                raise ChainUnsupported(f"control value {n.name} used as data", e.loc,
                                       "CHAIN-2.4")
        raise ChainUnsupported(f"data expression {type(e).__name__}", getattr(e, "loc", None),
                               "CHAIN-2.4")

    def access(self, buf: ir.Sym, idx: tuple[ir.Expr, ...], loc: SrcLoc) -> Access:
        key = self.names.get(buf)
        if key is None or key not in self.buffers:
            raise ChainUnsupported(f"access to unknown buffer {buf.name}", loc, "CHAIN-2.4")
        b = self.buffers[key]
        return Access(key, tuple(Aff.var(v) for v in b.prefix) + tuple(self.aff(i) for i in idx),
                      loc)

    def block(self, stmts: tuple[ir.Stmt, ...], iters: tuple[str, ...], dom: list[Formula],
              sched: list[Aff], offset: int = 0) -> int:
        for pos, s in enumerate(stmts, offset):
            here = sched + [Aff.num(pos)]
            match s:
                case ir.Alloc(name=n, typ=t):
                    shape = t.shape if isinstance(t, ir.Tensor) else ()
                    key = self.var_name(n)
                    self.buffers[key] = Buffer(key, n.name, False,
                                               tuple(self.aff(d) for d in shape), iters)
                case ir.Assign(buf=b, idx=idx, rhs=rhs) | ir.Reduce(buf=b, idx=idx, rhs=rhs):
                    write = self.access(b, idx, s.loc)
                    self.raw.append((isinstance(s, ir.Reduce), iters, conj(dom), here, write,
                                     self.value(rhs, {}), s.loc))
                case ir.If(cond=c, body=body, orelse=orelse):
                    f = self.cond(c)
                    self.block(body, iters, dom + [f], here + [Aff.num(0)])
                    self.block(orelse, iters, dom + [neg(f)], here + [Aff.num(1)])
                case ir.For(iter=it, lo=lo, hi=hi, body=body, mode=ir.Seq()):
                    v = self.var_name(it)
                    bounds = conj([le(self.aff(lo), Aff.var(v)), lt(Aff.var(v), self.aff(hi))])
                    self.block(body, iters + (v,), dom + [bounds], here + [Aff.var(v)])
                case ir.Pass():
                    pass
                case ir.For():
                    raise ChainUnsupported("a parallel loop left after erasure", s.loc)
                case _:
                    raise UnhandledNode(s)
        return offset + len(stmts)

    def program(self) -> Program:
        end = self.block(self.p.body, (), [], [])
        length = max([len(r[3]) for r in self.raw] + [1])
        stmts = tuple(
            Stmt(i, red, iters, dom, tuple(sched) + (Aff.num(0),) * (length - len(sched)),
                 write, rhs, loc, _distinct(tuple(self.display.get(v, v) for v in iters)))
            for i, (red, iters, dom, sched, write, rhs, loc) in enumerate(self.raw))
        context = conj([*(self.cond(e) for e in self.p.preds),
                        *(ge(Aff.var(n), 1) for n in self.params
                          if self._kind(n) == "size")])
        return Program(str(self.p.name), tuple(self.params), context, self.buffers, stmts,
                       length, end, tuple(a.name.name for a in self.p.args), self.p.loc)

    def _kind(self, name: str) -> str:
        return next(a.typ.kind for a in self.p.args if a.name.name == name
                    and isinstance(a.typ, ir.Control))


def _distinct(names: tuple[str, ...]) -> tuple[str, ...]:
    """Display names made distinct (an instr's loop `m` inside a task loop `m` shows `m'`)."""
    out: list[str] = []
    for n in names:
        while n in out:
            n += "'"
        out.append(n)
    return tuple(out)


def flatten(p: ir.Proc) -> Program:
    """Statement instances of a sequential proc. Rules: CHAIN-2.1, CHAIN-2.2, CHAIN-2.3"""
    return _Flattener(p).program()
