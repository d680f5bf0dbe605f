"""Which variables are tracked (SEM-2.1) and which elements an instr call touches (SEM-4.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from verifier.diagnostics import Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.instrs import Instr, InstrParam
from verifier.lang.stdlib.timelines import QualTL
from verifier.semantics.rules import AccessKind

_KIND = {"r": AccessKind.read, "w": AccessKind.write, "rw": AccessKind.read_write,
         "a": AccessKind.atomic}


def walk_stmts(stmts: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for s in stmts:
        yield s
        match s:
            case ir.If(body=body, orelse=orelse):
                yield from walk_stmts(body)
                yield from walk_stmts(orelse)
            case ir.For(body=body) | ir.DeviceFunction(body=body) | ir.Warps(body=body):
                yield from walk_stmts(body)
            case _:
                pass


def mutated_syms(proc: ir.Proc) -> frozenset[ir.Sym]:
    out: set[ir.Sym] = set()
    for s in walk_stmts(proc.body):
        if isinstance(s, (ir.Assign, ir.Reduce)):
            out.add(s.buf)
        elif isinstance(s, ir.Call) and isinstance(s.callee, Instr):
            for param, arg in zip(s.callee.params, s.args):
                if param.kind in ("tensor", "scalar") and param.access != "r" and \
                        isinstance(arg, (ir.Window, ir.Read)):
                    out.add(arg.buf)
    return frozenset(out)


def tracked_buffers(proc: ir.Proc) -> frozenset[ir.Sym]:
    """SEM-2.1: mutated somewhere (memory exemption is checked where the memory is known)."""
    return mutated_syms(proc)


@dataclass(frozen=True)
class InstrArg:
    """One tensor or scalar argument of an instr call that the callee accesses: a window, or
    (scalar parameter) a point read `x[i]`."""

    arg: ir.Window | ir.Read
    kind: AccessKind
    atomic_quals: frozenset[QualTL]
    param: InstrParam

    @property
    def buf(self) -> ir.Sym:
        return self.arg.buf


def box_exprs(arg: ir.Window | ir.Read) -> tuple[tuple[ir.Expr, ir.Expr | None], ...]:
    """The elements an argument touches as expressions (lo, hi) per dimension of [lo, hi),
    hi None for a point i, [i, i + 1) (exprs.compile_boxes evaluates them)."""
    if isinstance(arg, ir.Read):
        return tuple((e, None) for e in arg.idx)
    return tuple((a.pt, None) if isinstance(a, ir.Point) else (a.lo, a.hi) for a in arg.idx)


def limit_args(s: ir.Call, param: InstrParam, arg: ir.Window) -> tuple[ir.Expr | None, ...]:
    """Per window dimension, the argument bounding its relative index in a bounds-predicated
    wgmma store (dst[m, n] row major, dst[n, m] column major: m < M_end, n < N_end; SEM-4.3);
    () for other parameters."""
    if not param.clip.startswith("store_d_"):
        return ()
    assert isinstance(s.callee, Instr)
    ends = {p.name: a for p, a in zip(s.callee.params, s.args) if p.kind == "index"}
    order = ("M_end", "N_end") if param.clip == "store_d_row" else ("N_end", "M_end")
    window_dims = [k for k, a in enumerate(arg.idx) if isinstance(a, ir.Interval)]
    limits: list[ir.Expr | None] = [None] * len(arg.idx)
    for k, name in zip(window_dims, order):
        limits[k] = ends[name]
    return tuple(limits)


def clipped_box(s: ir.Call, a: "InstrArg", box: tuple[tuple[int, int], ...],
                shape: tuple[int, ...], value: Callable[[ir.Expr], int]
                ) -> tuple[tuple[int, int], ...]:
    """The part of an argument's box the callee touches (SEM-4.3): a tensor-map window only
    inside the tensor, a bounds-predicated wgmma store only index - lo < its limit."""
    clip = a.param.clip
    if not isinstance(a.arg, ir.Window) or not clip:
        return box
    out = list(box)
    for k, e in enumerate(limit_args(s, a.param, a.arg)):
        if e is not None:
            lo, hi = out[k]
            out[k] = (lo, min(hi, lo + value(e)))
    if clip == "tensor_map":
        out = [(max(lo, 0), min(hi, n)) for (lo, hi), n in zip(out, shape)]
    return tuple(out)


def instr_args(s: ir.Call) -> list[InstrArg]:
    """The accessed arguments of an instr call in parameter order (SEM-1.8, SEM-4.2, SEM-4.3);
    a scalar parameter is one element (`x` or `x[i]`)."""
    assert isinstance(s.callee, Instr)
    out = []
    for param, arg in zip(s.callee.params, s.args):
        if param.kind not in ("tensor", "scalar"):
            continue
        if not (isinstance(arg, ir.Window) or param.kind == "scalar" and isinstance(arg, ir.Read)):
            raise Unsupported(f"argument {param.name} of {s.callee.name} must be a tensor window",
                              s.loc, code="ERR-V11")
        out.append(InstrArg(arg, _KIND[param.access], param.atomic_quals, param))
    return out
