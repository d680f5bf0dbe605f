"""Which variables are tracked (SEM-2.1) and which elements an instr call touches (SEM-4.3)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

from verifier.diagnostics import Unsupported
from verifier.lang import ir
from verifier.lang.instrs import Instr, InstrParam
from verifier.lang.memories import Memory
from verifier.lang.timelines import QualTL
from verifier.lang.units import CollUnit
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
class InstrAccess:
    buf: ir.Sym
    kind: AccessKind
    elements: list[tuple[int, ...]]
    atomic_quals: frozenset[QualTL]
    param: InstrParam | None = None
    window: ir.Window | None = None


@dataclass(frozen=True)
class DistributedDim:
    """A window dimension a callee distributes (COLL-5.12): its position in the index list,
    the interval, and the unit of the synthetic `cuda_threads` loop over it."""

    pos: int
    interval: ir.Interval
    unit: CollUnit


def callee_distributed(param: InstrParam, w: ir.Window) -> tuple[DistributedDim, ...]:
    """The first len(param.distributed) intervals of `w` with their units (COLL-5.12)."""
    if not param.distributed:
        return ()
    out: list[DistributedDim] = []
    for pos, a in enumerate(w.idx):
        if isinstance(a, ir.Interval) and len(out) < len(param.distributed):
            out.append(DistributedDim(pos, a, param.distributed[len(out)]))
    return tuple(out)


def window_elements(w: ir.Window, value: Callable[[ir.Expr], int]) -> list[tuple[int, ...]]:
    ranges = []
    for a in w.idx:
        if isinstance(a, ir.Point):
            v = value(a.pt)
            ranges.append(range(v, v + 1))
        else:
            ranges.append(range(value(a.lo), value(a.hi)))
    return [tuple(t) for t in itertools.product(*ranges)]


def instr_accesses(s: ir.Call, bufs: Mapping[ir.Sym, tuple[tuple[int, ...], Memory]],
                   value: Callable[[ir.Expr], int]) -> list[InstrAccess]:
    """The accesses of an instr call in parameter order (SEM-1.8, SEM-4.2, SEM-4.3); a scalar
    parameter is one element (`x` or `x[i]`)."""
    assert isinstance(s.callee, Instr)
    out = []
    for param, arg in zip(s.callee.params, s.args):
        if param.kind not in ("tensor", "scalar"):
            continue
        if param.kind == "scalar" and isinstance(arg, ir.Read):
            out.append(InstrAccess(arg.buf, _KIND[param.access],
                                   [tuple(value(i) for i in arg.idx)], param.atomic_quals, param))
            continue
        if not isinstance(arg, ir.Window):
            raise Unsupported(f"argument {param.name} of {s.callee.name} must be a tensor window",
                              s.loc, code="ERR-V11")
        out.append(InstrAccess(arg.buf, _KIND[param.access], window_elements(arg, value),
                               param.atomic_quals, param, arg))
    return out
