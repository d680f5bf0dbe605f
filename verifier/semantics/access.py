"""Which variables are tracked (SEM-2.1) and which elements an instr call touches (SEM-4.3)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

from verifier.diagnostics import Unsupported
from verifier.lang import ir
from verifier.lang.instrs import Instr
from verifier.lang.memories import Memory
from verifier.lang.timelines import QualTL
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
                if param.kind == "tensor" and param.access != "r" and isinstance(arg, ir.Window):
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


def window_box(w: ir.Window, value: Callable[[ir.Expr], int]) -> tuple[tuple[int, int], ...]:
    """The window's elements as [lo, hi) per dimension (a point i is [i, i + 1))."""
    box = []
    for a in w.idx:
        if isinstance(a, ir.Point):
            v = value(a.pt)
            box.append((v, v + 1))
        else:
            box.append((value(a.lo), value(a.hi)))
    return tuple(box)


def window_elements(w: ir.Window, value: Callable[[ir.Expr], int]) -> list[tuple[int, ...]]:
    return [tuple(t) for t in itertools.product(*(range(lo, hi)
                                                   for lo, hi in window_box(w, value)))]


def instr_windows(s: ir.Call) -> list[tuple[ir.Window, AccessKind, frozenset[QualTL]]]:
    """The tensor arguments of an instr call in parameter order (SEM-1.8, SEM-4.2)."""
    assert isinstance(s.callee, Instr)
    out = []
    for param, arg in zip(s.callee.params, s.args):
        if param.kind != "tensor":
            continue
        if not isinstance(arg, ir.Window):
            raise Unsupported(f"argument {param.name} of {s.callee.name} must be a tensor window",
                              s.loc, code="ERR-V11")
        out.append((arg, _KIND[param.access], param.atomic_quals))
    return out


def instr_accesses(s: ir.Call, bufs: Mapping[ir.Sym, tuple[tuple[int, ...], Memory]],
                   value: Callable[[ir.Expr], int]) -> list[InstrAccess]:
    """The accesses of an instr call in parameter order, element by element (SEM-4.3)."""
    return [InstrAccess(w.buf, kind, window_elements(w, value), quals)
            for w, kind, quals in instr_windows(s)]
