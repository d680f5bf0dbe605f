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

from typing import TYPE_CHECKING, Mapping

import z3

from verifier.diagnostics import Unsupported
from verifier.lang.ir import ir
from verifier.lang.ir.guards import free_syms
from verifier.check.sites import Context, Loop
from verifier.encode.instances import Encoder
from verifier.encode.terms import conj
from verifier.semantics.schedules import Schedule, tied

if TYPE_CHECKING:
    import sympy


def count_before(enc: Encoder, site_ctx: Context, site_index: tuple[ir.Expr, ...],
                 element: tuple[z3.ArithRef, ...], alloc_loops: tuple[ir.Sym, ...],
                 point_ctx: Context, point_iters: Mapping[ir.Sym, z3.ArithRef],
                 strict_textual: bool = True, site_loc: object = None,
                 affine: bool = False, pins_in_range: bool = False,
                 schedule: Schedule = Schedule.SEQUENTIAL) -> z3.ArithRef:
    """#instances of the site, on `element`, before the point (x) in trace order. With
    `affine` (an endgame ring, DIAL-2) an index `i + c` (c free of loop iterators) pins i to
    element - c, and the site has an instance only where that value is in i's range. In the
    lockstep `schedule` (DIAL-11, semantics/schedules.py) a pinned thread loop orders
    nothing: the site's instance in another iteration compares as if in x's."""
    zctx = enc.zctx
    loc = getattr(site_loc, "loc", None)
    fixed = set(alloc_loops) | {lp.sym for lp in site_ctx.loops if lp.kind == "task"}
    pinned = _pins(site_ctx, site_index, element, fixed)
    in_range: list[z3.BoolRef] = []
    if affine:
        pinned, in_range = _affine_pins(enc, site_ctx, site_index, element, fixed, pinned,
                                        point_iters, loc)
    elif pins_in_range:  # BW-5.5: a commit's thread loop may cover fewer CTAs than the barrier
        in_range = [c for lp in site_ctx.loops if lp.sym in pinned and lp.kind == "threads"
                    for c in (pinned[lp.sym] >= enc.value(lp.lo, {}),
                              pinned[lp.sym] < enc.value(lp.hi, {}))]
    point_loops = {lp.sym for lp in point_ctx.loops}
    common = [lp for lp in site_ctx.loops if lp.sym in point_loops]
    all_syms = {lp.sym for lp in site_ctx.loops}
    if any(lp.kind == "seq" and (free_syms(lp.lo) | free_syms(lp.hi)) & all_syms
           for lp in site_ctx.loops):
        if site_ctx.conds:
            raise Unsupported("not supported by spork-verify: a barrier Arrive/Await under an "
                              "`if` in a non-rectangular loop nest", loc, code="ERR-V11",
                              rule="SEM-6.4")
        textual = site_ctx.path < point_ctx.path if strict_textual else \
            site_ctx.path <= point_ctx.path
        return _count_polynomial(enc, site_ctx, pinned, point_loops, point_iters, fixed,
                                 textual, schedule)
    known = {**{s: point_iters[s] for s in fixed if s in point_iters}, **pinned}
    summed = all_syms - set(known)
    tight, present = _conditions(enc, site_ctx, summed, known, loc)
    if in_range:
        present = conj([present, *in_range] if present is not None else in_range, zctx)
    env: dict[ir.Sym, z3.ArithRef] = {}

    def bounds(lp: Loop) -> tuple[z3.ArithRef, z3.ArithRef]:
        """The loop's range, narrowed by the `if`s around the site (SEM-6.4 with guards)."""
        lo, hi = enc.value(lp.lo, env), enc.value(lp.hi, env)
        for e in tight.get(lp.sym, ([], []))[0]:
            lo = z3.If(e > lo, e, lo)
        for e in tight.get(lp.sym, ([], []))[1]:
            hi = z3.If(e < hi, e, hi)
        return lo, hi

    def extent(lp: Loop) -> z3.ArithRef:
        if lp.sym in pinned:
            return z3.IntVal(1, zctx)
        lo, hi = bounds(lp)
        if z3.is_int_value(lo) and z3.is_int_value(hi):
            return z3.IntVal(max(hi.as_long() - lo.as_long(), 0), zctx)
        return z3.If(hi > lo, hi - lo, 0)

    def size_inside(k: int) -> z3.ArithRef:
        """Instances of the site per iteration of its k-th loop."""
        total: z3.ArithRef = z3.IntVal(1, zctx)
        for lp in site_ctx.loops[k + 1:]:
            total = _times(enc, total, extent(lp))
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
        if lp.sym in pinned and tied(schedule, lp.kind):
            env[lp.sym] = pinned[lp.sym]
        elif lp.sym in pinned:
            v = pinned[lp.sym]
            before = z3.If(conj((prefix_ok, v < x), zctx), size_inside(k), 0)
            count = count + before
            prefix_ok = conj((prefix_ok, v == x), zctx)
            env[lp.sym] = v
        elif lp.sym not in tight:
            # Unnarrowed range: while prefix_ok holds, env agrees with the point's own
            # iterators, so lo <= x < hi already holds there and x - lo is exact (and a
            # much lighter term for the solver than the clamped form below).
            count = count + z3.If(prefix_ok, _times(enc, x - enc.value(lp.lo, env), size_inside(k)), 0)
            env[lp.sym] = x
        else:
            lo, hi = bounds(lp)
            upto = z3.If(x < hi, x, hi)  # iterations of the narrowed range before x
            done = z3.If(upto > lo, upto - lo, 0)
            count = count + z3.If(prefix_ok, _times(enc, done, size_inside(k)), 0)
            prefix_ok = conj((prefix_ok, lo <= x, x < hi), zctx)
            env[lp.sym] = x
    depth = len(common)
    textual = site_ctx.path < point_ctx.path if strict_textual else site_ctx.path <= point_ctx.path
    if textual:
        inner: z3.ArithRef = z3.IntVal(1, zctx)
        for lp in site_ctx.loops[depth:]:
            inner = _times(enc, inner, extent(lp))
        count = count + z3.If(prefix_ok, inner, 0)
    return count if present is None else z3.If(present, count, 0)


def _times(enc: Encoder, lhs: z3.ArithRef, rhs: z3.ArithRef) -> z3.ArithRef:
    """lhs · rhs with unit factors dropped and constants folded, so that a count over a
    rectangular nest of constant extents stays linear for the solver (a product with a
    literal `1 * 1` factor was read as nonlinear and forced needless refinement)."""
    if z3.is_int_value(lhs) and z3.is_int_value(rhs):
        return z3.IntVal(lhs.as_long() * rhs.as_long(), lhs.ctx)
    if z3.is_int_value(rhs):
        lhs, rhs = rhs, lhs
    if z3.is_int_value(lhs) and lhs.as_long() == 1:
        return rhs
    if not z3.is_int_value(lhs):
        enc.note_product()
    return lhs * rhs


def _isolate(lhs: ir.Expr, rhs: ir.Expr, summed: set[ir.Sym]) -> tuple[ir.Expr, ir.Expr]:
    """`i + c  op  e` → `i  op  e - c` (and `c + i`, `i - c`): the counted iterator alone on
    the left, with unit coefficient (anything else is left for the caller to refuse)."""
    while isinstance(lhs, ir.BinOp) and lhs.op in ("+", "-"):
        a, b = lhs.lhs, lhs.rhs
        if free_syms(a) & summed and not free_syms(b) & summed:
            rhs = ir.BinOp("-" if lhs.op == "+" else "+", rhs, b, lhs.loc)
            lhs = a
        elif lhs.op == "+" and free_syms(b) & summed and not free_syms(a) & summed:
            rhs = ir.BinOp("-", rhs, a, lhs.loc)
            lhs = b
        else:
            break
    return lhs, rhs


_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _conditions(enc: Encoder, ctx: Context, summed: set[ir.Sym],
                known: Mapping[ir.Sym, z3.ArithRef], loc: object
                ) -> tuple[dict[ir.Sym, tuple[list[z3.ArithRef], list[z3.ArithRef]]],
                           z3.BoolRef | None]:
    """The `if`s around a barrier site as exact loop-range narrowing: a comparison of one
    counted iterator with an expression free of counted iterators moves that loop's lo or hi;
    a condition free of counted iterators decides whether the site has instances at all.
    Anything else is outside the closed form (ERR-V11)."""
    tight: dict[ir.Sym, tuple[list[z3.ArithRef], list[z3.ArithRef]]] = {}
    present: list[z3.BoolRef] = []
    pending = list(ctx.conds)
    while pending:
        cond, polarity = pending.pop()
        uses = free_syms(cond) & summed
        if not uses:
            c = enc.boolean(enc.value(cond, known))
            present.append(c if polarity else z3.Not(c))
            continue
        if isinstance(cond, ir.BinOp) and cond.op == "and" and polarity:
            pending += [(cond.lhs, True), (cond.rhs, True)]
            continue
        if isinstance(cond, ir.BinOp) and cond.op == "or" and not polarity:
            pending += [(cond.lhs, False), (cond.rhs, False)]
            continue
        op = cond.op if isinstance(cond, ir.BinOp) else ""
        if op not in _NEGATE:
            break
        op = op if polarity else _NEGATE[op]
        lhs, rhs = cond.lhs, cond.rhs  # type: ignore[union-attr]
        if free_syms(rhs) & summed and not free_syms(lhs) & summed:
            lhs, rhs, op = rhs, lhs, _MIRROR[op]
        lhs, rhs = _isolate(lhs, rhs, summed)
        if not (isinstance(lhs, ir.Var) and lhs.name in summed) or free_syms(rhs) & summed \
                or op == "!=":
            break
        e = enc.value(rhs, known)
        lows, highs = tight.setdefault(lhs.name, ([], []))
        if op in (">", ">=", "=="):
            lows.append(e + 1 if op == ">" else e)
        if op in ("<", "<=", "=="):
            highs.append(e + 1 if op in ("<=", "==") else e)
    else:
        return tight, z3.And(*present) if present else None
    raise Unsupported("not supported by spork-verify: a barrier Arrive/Await under an `if` "
                      "that is not a bound on one loop iterator (its counter has no closed "
                      "form here)", loc, code="ERR-V11", rule="SEM-6.4")


def _count_polynomial(enc: Encoder, site_ctx: Context, pinned: dict[ir.Sym, z3.ArithRef],
                      point_loops: set[ir.Sym], point_iters: Mapping[ir.Sym, z3.ArithRef],
                      fixed: set[ir.Sym], textual: bool,
                      schedule: Schedule = Schedule.SEQUENTIAL) -> z3.ArithRef:
    """count_before for a nest whose bounds use outer iterators: the same lexicographic rank,
    with the per-iteration sizes summed symbolically (nest_sums.py). Its premise (non-negative
    extents) is left in `enc.premises` for the verifier to discharge. (nest_sums loads
    sympy, a third of the command line's start-up: imported only for such nests.)"""
    from verifier.encode.nest_sums import NestSums

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
        elif lp.sym in pinned and tied(schedule, lp.kind):
            bound[var] = pinned[lp.sym]
        elif lp.sym in pinned:
            inside = sums.instances_inside(k, pins).subs(var, pins[lp.sym])
            count = count + z3.If(conj((prefix_ok, pinned[lp.sym] < x), zctx),
                                  sums.to_z3(inside, bound), 0)
            prefix_ok = conj((prefix_ok, pinned[lp.sym] == x), zctx)
            bound[var] = pinned[lp.sym]
        else:
            upto = sums.bind(lp.sym, x)
            count = count + z3.If(prefix_ok, sums.to_z3(sums.before(k, upto, pins), bound), 0)
            bound[var] = x
    if textual:
        inner = sums.instances_inside(depth - 1, pins)
        count = count + z3.If(prefix_ok, sums.to_z3(inner, bound), 0)
    return count


def _affine_pins(enc: Encoder, ctx: Context, index: tuple[ir.Expr, ...],
                 element: tuple[z3.ArithRef, ...], fixed: set[ir.Sym],
                 pins: dict[ir.Sym, z3.ArithRef], point_iters: Mapping[ir.Sym, z3.ArithRef],
                 loc: object) -> tuple[dict[ir.Sym, z3.ArithRef], list[z3.BoolRef]]:
    """DIAL-2: `i + c`, `c + i`, `i - c` on a ring dimension pin the loop iterator i; the
    conditions say the pinned value is an iteration of i's loop."""
    loops = {lp.sym: lp for lp in ctx.loops}
    out, conds = dict(pins), []
    for e, v in zip(index, element):
        if not free_syms(e) & set(loops):  # a constant index: the site names one element
            conds.append(v == enc.value(e, {s: point_iters[s] for s in fixed
                                            if s in point_iters}))
            continue
        found = _solve(e, v, enc, set(loops))
        if isinstance(e, ir.Var) and found is not None and found[0] in pins:
            pass  # a plain iterator pinned by _pins: its range is checked below
        elif found is None or found[0] not in loops or found[0] in fixed or found[0] in out:
            raise Unsupported("not supported by spork-verify: a ring-barrier index that is not "
                              "`i + c` for one loop iterator i of its statement (its counter "
                              "has no closed form here)", loc, code="ERR-V11", rule="DIAL-2")
        sym, value = found
        lp = loops[sym]
        env = {s: point_iters[s] for s in fixed if s in point_iters}
        if (free_syms(lp.lo) | free_syms(lp.hi)) & set(loops) - set(env):
            raise Unsupported("not supported by spork-verify: a ring-barrier index over a loop "
                              "whose bounds use other loop iterators", loc, code="ERR-V11",
                              rule="DIAL-2")
        out[sym] = value
        conds += [value >= enc.value(lp.lo, env), value < enc.value(lp.hi, env)]
    return out, conds


def _solve(e: ir.Expr, v: z3.ArithRef, enc: Encoder, iters: set[ir.Sym]
           ) -> tuple[ir.Sym, z3.ArithRef] | None:
    """(i, v - c) when e is i + c, c + i or i - c with c free of the loop iterators."""
    match e:
        case ir.Var(name=sym):
            return sym, v
        case ir.BinOp(op="+" | "-", lhs=a, rhs=b):
            for inner, other, sign in ((a, b, 1 if e.op == "+" else -1), (b, a, 1)):
                if e.op == "-" and inner is b:
                    break
                if not free_syms(other) & iters:
                    return _solve(inner, v - sign * enc.value(other, {}), enc, iters)
    return None


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
