"""Guard cycles and ring depth of mbarrier variables (LANG-5.15, LANG-5.19): language rules
read by the static checks, the machine, the encoder and codegen alike."""

from __future__ import annotations

from typing import Mapping

from verifier.lang.ir import ir


def guard_map(guards: Mapping[ir.Sym, ir.Sym | None]) -> dict[ir.Sym, ir.Sym]:
    """guardedBy(z) for every mbarrier variable, declarations in order (LANG-5.15): `zb:
    barrier(za)` makes za guard zb, and zb takes over whatever za guarded."""
    guarded_by = {s: s for s in guards}
    for s, a in guards.items():
        if a is None or a not in guarded_by:
            continue
        displaced = [z for z, g in guarded_by.items() if g == a and z != s]
        guarded_by[s] = a
        for z in displaced:
            guarded_by[z] = s
    return guarded_by


def guard_cycle(guarded_by: Mapping[ir.Sym, ir.Sym], start: ir.Sym) -> list[ir.Sym]:
    cycle, cur = [start], guarded_by[start]
    while cur != start and cur not in cycle:
        cycle.append(cur)
        cur = guarded_by[cur]
    return cycle


def ring_depth(sym: ir.Sym, guarded_by: Mapping[ir.Sym, ir.Sym], lags: Mapping[ir.Sym, int]
               ) -> int:
    """LANG-5.19: 1 + lag for a self-guarded barrier, else the sum of the cycle's lags."""
    cycle = guard_cycle(guarded_by, sym)
    if cycle == [sym]:
        return 1 + lags.get(sym, 0)
    return sum(lags.get(c, 0) for c in cycle)


def free_syms(e: ir.Expr) -> set[ir.Sym]:
    """The symbols (sizes, iterators) a control expression reads."""
    match e:
        case ir.Var(name=n):
            return {n}
        case ir.BinOp(lhs=lhs, rhs=rhs):
            return free_syms(lhs) | free_syms(rhs)
        case ir.USub(arg=arg):
            return free_syms(arg)
    return set()
