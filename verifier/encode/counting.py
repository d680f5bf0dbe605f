"""Closed forms of barrier counters (semantics.md §12.4): how many Arrive (or Await) instances
on one barrier element precede a trace point, as a Z3 term over that point's iterators.

For a site S with enclosing loops L1..Lm, the instances on element j preceding point x are
counted lexicographically over the loops S shares with x (SEM-1.8): iterations of a shared
loop before x's, times the sizes of S's loops inside it, plus S's instances in x's own
iteration when S is textually first. S's thread loops are pinned by the element (barrier
indices are exactly its distributed iterators, COLL-5.9); loops enclosing the barrier's
allocation are fixed (same allocation instance). Rectangular nests are counted with products
of extents directly in Z3; nests whose bounds use outer iterators are summed with sympy
(nest_sums.py). Sites under an `if` are outside the closed form: `unsupported` (ERR-V11).
"""

from __future__ import annotations

from typing import Mapping

import sympy
import z3

from verifier.diagnostics import Unsupported
from verifier.lang import ir
from verifier.lang.guards import free_syms
from verifier.semantics.sites import Context, Loop
from verifier.encode.instances import Encoder
from verifier.encode.nest_sums import NestSums


def count_before(enc: Encoder, site_ctx: Context, site_index: tuple[ir.Expr, ...],
                 element: tuple[z3.ArithRef, ...], alloc_loops: tuple[ir.Sym, ...],
                 point_ctx: Context, point_iters: Mapping[ir.Sym, z3.ArithRef],
                 strict_textual: bool = True, site_loc: object = None) -> z3.ArithRef:
    """#instances of the site, on `element`, before the point (x) in trace order."""
    zctx = enc.zctx
    if site_ctx.conds:
        raise Unsupported("not supported by spork-verify: a barrier Arrive/Await under an `if` "
                          "(its counter has no closed form here)", getattr(site_loc, "loc", None)
                          if site_loc is not None else None, code="ERR-V11", rule="SEM-6.4")
    fixed = set(alloc_loops) | {lp.sym for lp in site_ctx.loops if lp.kind == "task"}
    pinned = _pins(site_ctx, site_index, element, fixed)
    point_loops = {lp.sym for lp in point_ctx.loops}
    common = [lp for lp in site_ctx.loops if lp.sym in point_loops]
    all_syms = {lp.sym for lp in site_ctx.loops}
    if any(lp.kind == "seq" and (free_syms(lp.lo) | free_syms(lp.hi)) & all_syms
           for lp in site_ctx.loops):
        textual = site_ctx.path < point_ctx.path if strict_textual else \
            site_ctx.path <= point_ctx.path
        return _count_polynomial(enc, site_ctx, pinned, point_loops, point_iters, fixed,
                                 textual)
    env: dict[ir.Sym, z3.ArithRef] = {}

    def extent(lp: Loop) -> z3.ArithRef:
        if lp.sym in pinned:
            return z3.IntVal(1, zctx)
        lo, hi = enc.value(lp.lo, env), enc.value(lp.hi, env)
        return z3.If(hi > lo, hi - lo, 0)

    def size_inside(k: int) -> z3.ArithRef:
        """Instances of the site per iteration of its k-th loop."""
        total: z3.ArithRef = z3.IntVal(1, zctx)
        for lp in site_ctx.loops[k + 1:]:
            total = total * extent(lp)
        return total

    count: z3.ArithRef = z3.IntVal(0, zctx)
    prefix_ok: z3.BoolRef = z3.BoolVal(True, zctx)
    for lp in site_ctx.loops:
        if lp.sym not in point_loops:
            break
        k = site_ctx.loops.index(lp)
        x = point_iters[lp.sym]
        if lp.sym in fixed:
            env[lp.sym] = x
            continue
        if lp.sym in pinned:
            v = pinned[lp.sym]
            before = z3.If(z3.And(prefix_ok, v < x), size_inside(k), 0)
            count = count + before
            prefix_ok = z3.And(prefix_ok, v == x)
            env[lp.sym] = v
        else:
            lo = enc.value(lp.lo, env)
            count = count + z3.If(prefix_ok, (x - lo) * size_inside(k), 0)
            env[lp.sym] = x
    depth = len(common)
    textual = site_ctx.path < point_ctx.path if strict_textual else site_ctx.path <= point_ctx.path
    if textual:
        inner: z3.ArithRef = z3.IntVal(1, zctx)
        for lp in site_ctx.loops[depth:]:
            inner = inner * extent(lp)
        count = count + z3.If(prefix_ok, inner, 0)
    return count


def _count_polynomial(enc: Encoder, site_ctx: Context, pinned: dict[ir.Sym, z3.ArithRef],
                      point_loops: set[ir.Sym], point_iters: Mapping[ir.Sym, z3.ArithRef],
                      fixed: set[ir.Sym], textual: bool) -> z3.ArithRef:
    """count_before for a nest whose bounds use outer iterators: the same lexicographic rank,
    with the per-iteration sizes summed symbolically (nest_sums.py). Its premise (non-negative
    extents) is left in `enc.premises` for the verifier to discharge."""
    zctx = enc.zctx
    sums = NestSums(enc, site_ctx.loops)
    pins = {sym: sums.bind(sym, v) for sym, v in pinned.items()}
    sums.require_nonnegative_extents(pinned, enc.premises)
    bound: dict[sympy.Symbol, z3.ArithRef] = {}
    count: z3.ArithRef = z3.IntVal(0, zctx)
    prefix_ok: z3.BoolRef = z3.BoolVal(True, zctx)
    depth = 0
    for k, lp in enumerate(site_ctx.loops):
        if lp.sym not in point_loops:
            break
        depth = k + 1
        x = point_iters[lp.sym]
        var = sums.iters[lp.sym]
        if lp.sym in fixed:
            bound[var] = x
        elif lp.sym in pinned:
            inside = sums.instances_inside(k, pins).subs(var, pins[lp.sym])
            count = count + z3.If(z3.And(prefix_ok, pinned[lp.sym] < x),
                                  sums.to_z3(inside, bound), 0)
            prefix_ok = z3.And(prefix_ok, pinned[lp.sym] == x)
            bound[var] = pinned[lp.sym]
        else:
            upto = sums.bind(lp.sym, x)
            count = count + z3.If(prefix_ok, sums.to_z3(sums.before(k, upto, pins), bound), 0)
            bound[var] = x
    if textual:
        inner = sums.instances_inside(depth - 1, pins)
        count = count + z3.If(prefix_ok, sums.to_z3(inner, bound), 0)
    return count


def _pins(ctx: Context, index: tuple[ir.Expr, ...], element: tuple[z3.ArithRef, ...],
          fixed: set[ir.Sym]) -> dict[ir.Sym, z3.ArithRef]:
    """Thread-loop iterators fixed by the barrier element (COLL-5.9); thread loops enclosing
    the allocation are fixed by the allocation instance (one barrier per iteration, its slice
    in the lowering, COLL-5.11)."""
    pins: dict[ir.Sym, z3.ArithRef] = {}
    for e, v in zip(index, element):
        if isinstance(e, ir.Var):
            pins[e.name] = v
    for lp in ctx.loops:
        if lp.kind == "threads" and lp.sym not in pins and lp.sym not in fixed:
            hi = lp.hi.value if isinstance(lp.hi, ir.Const) else None
            if hi != 1:
                raise Unsupported(f"not supported by spork-verify: barrier site inside thread "
                                  f"loop {lp.sym.name} that is not one of its indices", lp.loc,
                                  code="ERR-V11", rule="COLL-5.9")
    return pins
