"""Obligations settled without a solver (specs/verification.md "Pruning", PR-1..PR-7).

Each rule is a static sufficient condition, cheap enough to run on every pair of a proc with
thousands of statements:

* PR-1 different allocations: the pair is never formed (obligations.py).
* PR-2 disjoint index ranges: in some dimension the two accesses' index intervals (loop ranges
  with constant bounds, interval arithmetic) cannot meet: no common element.
* PR-3 dominating fence: a Fence run by every thread of the task, valid wherever both accesses
  are, sits between them in trace order for every pair of instances, witnesses the earlier
  access's qual-tl and grants the flag the later one needs: the level-0 query is unsat by the
  chain of length 1 through that fence's instance.
* PR-4 nearest conflicting access: the pairs that are obligations at all (pairs.py).
* PR-5 bounds by intervals: every index interval lies in [0, least extent).
* PR-6 sites that never run: an empty loop interval or an `if` the intervals refute; sync
  events at such sites are left out of the fence chains (visibility.sync_events).
* PR-7 one instance per element: the two sites share their loops and index the variable by
  the same affine forms, injective in the loops inside the allocation, so instances of one
  allocation touching one element have equal iterators: a ≺ b only in textual order, and
  then by program order of the one thread that runs them.

Everything here reads the static model (check.sites) and the rule tables; no Z3.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable
from fractions import Fraction

from verifier import collectives
from verifier.lang.ir import ir
from verifier.lang.ir.affine import Affine, affine
from verifier.semantics import rules
from verifier.semantics.rules import Flag
from verifier.check.sites import AccessSite, Context, FenceSite, Loop, ProgramModel

Interval = tuple[float, float]  # closed [lo, hi]; ±inf for unknown ends
_ANY: Interval = (-math.inf, math.inf)


def _common(x: tuple[Loop, ...], y: tuple[Loop, ...]) -> int:
    """Length of the common prefix of two loop nests (the loops enclosing both sites)."""
    n = 0
    for p, q in zip(x, y):
        if p is not q and p != q:
            break
        n += 1
    return n


def _is_prefix(short: tuple, long: tuple) -> bool:
    return long[:len(short)] == short


def _anchors(pa: tuple[int, ...], px: tuple[int, ...], pb: tuple[int, ...], whole: bool
             ) -> str:
    """Which instance of x lies between a and b in trace order for every a before b (SEM-1.8),
    when x's loops are all shared with both: "a" (x at a's iterators on its loops), "b" (at
    b's), both or neither. `whole`: x's loops are all the loops a and b share; then a
    textually at or after b means a ran in an earlier iteration of a shared loop, so x's
    instance in a's iteration (x after a) or in b's (x before b) is between them."""
    if pa < px < pb:
        return "ab"
    if whole and pa >= pb:
        return ("a" if pa < px else "") + ("b" if px < pb else "")
    return ""


# ---------------------------------------------------------------- PR-2 intervals

def _interval(e: ir.Expr, ranges: dict[ir.Sym, Interval]) -> Interval:
    match e:
        case ir.Const(value=v) if isinstance(v, int) and not isinstance(v, bool):
            return (v, v)
        case ir.Var(name=name):
            return ranges.get(name, _ANY)
        case ir.USub(arg=arg):
            lo, hi = _interval(arg, ranges)
            return (-hi, -lo)
        case ir.BinOp(op="+", lhs=lhs, rhs=rhs):
            (a, b), (c, d) = _interval(lhs, ranges), _interval(rhs, ranges)
            return (a + c, b + d)
        case ir.BinOp(op="-", lhs=lhs, rhs=rhs):
            (a, b), (c, d) = _interval(lhs, ranges), _interval(rhs, ranges)
            return (a - d, b - c)
        case ir.BinOp(op="*", lhs=lhs, rhs=rhs):
            (a, b), (c, d) = _interval(lhs, ranges), _interval(rhs, ranges)
            if math.inf in (abs(a), abs(b), abs(c), abs(d)):
                if (a, b) == (0, 0) or (c, d) == (0, 0):
                    return (0, 0)
                return _ANY
            products = (a * c, a * d, b * c, b * d)
            return (min(products), max(products))
        case ir.BinOp(op="/", lhs=lhs, rhs=ir.Const(value=k)) if isinstance(k, int) and k > 0:
            lo, hi = _interval(lhs, ranges)
            return (math.floor(lo / k) if lo > -math.inf else lo,
                    math.floor(hi / k) if hi < math.inf else hi)
        case ir.BinOp(op="%", lhs=lhs, rhs=ir.Const(value=k)) if isinstance(k, int) and k > 0:
            lo, hi = _interval(lhs, ranges)
            if lo > -math.inf and hi < math.inf and math.floor(lo / k) == math.floor(hi / k):
                return (lo % k, hi % k)
            return (0, k - 1)
    return _ANY


def _ranges(ctx: Context, sizes: Iterable[ir.Sym]) -> dict[ir.Sym, Interval]:
    """Each iterator's range from its loop bounds (outer iterators' ranges substituted);
    sizes are non-negative."""
    out: dict[ir.Sym, Interval] = {s: (0, math.inf) for s in sizes}
    for lp in ctx.loops:
        lo, hi = _interval(lp.lo, out), _interval(lp.hi, out)
        out[lp.sym] = (lo[0], hi[1] - 1)
    return out


def _site_intervals(site: AccessSite, sizes: Iterable[ir.Sym]) -> list[Interval]:
    ranges = _ranges(site.ctx, sizes)
    out = []
    for pt, iv in zip(site.element.points, site.element.intervals):
        if pt is not None:
            out.append(_interval(pt, ranges))
        elif iv is not None:
            lo, hi = _interval(iv[0], ranges), _interval(iv[1], ranges)
            out.append((lo[0], hi[1] - 1))
        else:
            out.append(_ANY)
    return out


# ---------------------------------------------------------------- PR-6 sites without instances

def _never(cond: ir.Expr, polarity: bool, ranges: dict[ir.Sym, Interval]) -> bool:
    """The condition (negated when polarity is False) is false for every value the PR-2
    intervals allow: a comparison whose sides' intervals cannot satisfy it; `and` when either
    side is never true (`or` when both are: in an else branch, polarity flips them)."""
    match cond:
        case ir.BinOp(op="and" | "or", lhs=lhs, rhs=rhs):
            either = (cond.op == "and") == polarity
            parts = (_never(lhs, polarity, ranges), _never(rhs, polarity, ranges))
            return any(parts) if either else all(parts)
        case ir.BinOp(op="<" | "<=" | ">" | ">=", lhs=lhs, rhs=rhs):
            (a, b), (c, d) = _interval(lhs, ranges), _interval(rhs, ranges)
            op = cond.op if polarity else {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[cond.op]
            return {"<": a >= d, "<=": a > d, ">": b <= c, ">=": b < c}[op]
    return False


def dead(ctx: Context, sizes: Iterable[ir.Sym]) -> bool:
    """PR-6: no instance of `ctx` exists for any sizes: some loop's iterator interval is empty,
    or some enclosing `if` condition can never hold (loops after cut_loop: `if iter_k >= 1`
    inside `for iter_k in seq(0, 1)`). The intervals contain every value of every valid
    instance, so a site said dead has none."""
    ranges = _ranges(ctx, sizes)
    if any(ranges[lp.sym][0] > ranges[lp.sym][1] for lp in ctx.loops):
        return True
    return any(_never(c, pol, ranges) for c, pol in ctx.conds)


class Pruner:
    """The static rules for one proc's hazard pairs."""

    def __init__(self, model: ProgramModel) -> None:
        self.model = model
        self.sizes = tuple(model.sizes)
        self._intervals: dict[int, list[Interval]] = {}
        self._forms: dict[int, tuple[Affine, ...] | None] = {}
        # PR-3's fences by the loops around them (the loops both sites share, SEM-1.8)
        self._fences: dict[tuple[ir.Sym, ...], tuple[list[tuple[int, ...]], list[FenceSite]]] \
            = {}
        everyone: dict[int, bool] = {}
        for f in sorted(model.fences, key=lambda f: f.ctx.path):
            key = id(f.ctx.tiling)
            if key not in everyone:
                everyone[key] = self._everyone(f)
            if everyone[key]:
                paths, fences = self._fences.setdefault(tuple(lp.sym for lp in f.ctx.loops),
                                                        ([], []))
                paths.append(f.ctx.path)
                fences.append(f)

    def settled_by(self, sa: AccessSite, sb: AccessSite, flag: Flag) -> str:
        """The rule that settles the hazard pair (a, b) without a solver, or ""."""
        return "PR-2" if self.disjoint(sa, sb) else "PR-3" if self.fenced(sa, sb, flag) else \
            "PR-7" if self.one_instance(sa, sb) else ""

    # ------------------------------------------------------------ PR-2

    def disjoint(self, sa: AccessSite, sb: AccessSite) -> bool:
        ia, ib = self._site_intervals(sa), self._site_intervals(sb)
        return any(a[1] < b[0] or b[1] < a[0] for a, b in zip(ia, ib))

    def _site_intervals(self, site: AccessSite) -> list[Interval]:
        if site.id not in self._intervals:
            self._intervals[site.id] = _site_intervals(site, self.sizes)
        return self._intervals[site.id]

    # ------------------------------------------------------------ PR-5

    def in_bounds(self, site: AccessSite) -> bool:
        """Every index of every instance lies in [0, extent) by the PR-2 intervals: the
        least value the extent can take bounds the greatest index (windows: lo ≥ 0, hi at
        most the extent, and lo ≤ hi for every pair of values)."""
        ranges = _ranges(site.ctx, self.sizes)
        for dim, pt, iv in zip(site.shape, site.element.points, site.element.intervals):
            extent = _interval(dim, ranges)[0]
            if pt is not None:
                lo, hi = _interval(pt, ranges)
                if lo < 0 or hi > extent - 1:
                    return False
            elif iv is not None:
                (lo, lo_max), (hi_min, hi) = _interval(iv[0], ranges), _interval(iv[1], ranges)
                if lo < 0 or hi > extent or lo_max > hi_min:
                    return False
            else:
                return False
        return True

    # ------------------------------------------------------------ PR-3

    def _everyone(self, f: FenceSite) -> bool:
        """f runs on every thread of its task, at task level (no thread loop around it)."""
        dev = f.ctx.device
        if dev is None or f.ctx.thread_iters:
            return False
        threads = collectives.thread_set(f.ctx.tiling, {}, dev.cfg)
        return threads == frozenset(range(dev.cfg.num_threads))

    def fenced(self, sa: AccessSite, sb: AccessSite, flag: Flag) -> bool:
        """PR-3. A fence that qualifies has exactly the loops a and b share: textually
        between them, it is inside every loop they share (a loop's statements are contiguous),
        and otherwise `_anchors` asks for it (`whole`); so only that bucket is searched."""
        da = sa.ctx.device
        if da is None or da is not sb.ctx.device or sb.ctx.device is None:
            return False
        if not set(da.outer_loops + da.task_loops) <= set(sa.alloc_loops):
            return False  # same allocation instance does not imply the same task
        pa, pb = sa.ctx.path, sb.ctx.path
        shared = _common(sa.ctx.loops, sb.ctx.loops)
        bucket = self._fences.get(tuple(lp.sym for lp in sa.ctx.loops[:shared]))
        if bucket is None:
            return False
        paths, fences = bucket
        after, before = bisect.bisect_right(paths, pa), bisect.bisect_left(paths, pb)
        # between them, or else after a (at a's iterators) or before b (at b's)
        window = range(after, before) if pa < pb else \
            itertools.chain(range(after, len(fences)), range(before))
        for f in map(fences.__getitem__, window):
            if f.ctx.device is not da or not self._valid_with(f.ctx, sa.ctx, sb.ctx):
                continue
            if not _anchors(pa, f.ctx.path, pb, len(f.ctx.loops) == shared):
                continue
            first, second = rules.SYNC_SETS[f.first], rules.SYNC_SETS[f.second]
            grants = second.temporal if flag is Flag.temp else second.full
            if sa.qual.q0 in first.full and grants & sb.qual.extended:
                return True
        return False

    @staticmethod
    def _valid_with(x: Context, a: Context, b: Context) -> bool:
        """x's loops are shared by a and b and its `if`s hold wherever theirs do."""
        return _is_prefix(x.loops, a.loops) and _is_prefix(x.loops, b.loops) and \
            set(x.conds) <= set(a.conds) and set(x.conds) <= set(b.conds)

    # ------------------------------------------------------------ PR-7

    def one_instance(self, sa: AccessSite, sb: AccessSite) -> bool:
        """PR-7: every model of the pair's query has a and b at equal iterators (same loops,
        the same affine point indices, injective in the loops below the allocation: same
        element and same allocation instance); then a ≺ b needs a textually first, and the
        one thread that runs both instances (one-thread boxes, one tiling) sees a by program
        order (SEM-4.6) when a is in order and q0(a) ∈ X(b)."""
        ca, cb = sa.ctx, sb.ctx
        if ca.device is None or cb.device is not ca.device or ca.loops != cb.loops:
            return False
        if ca.tiling is not cb.tiling and ca.tiling != cb.tiling:
            return False
        forms = self._point_forms(sa)
        if forms is None or forms != self._point_forms(sb):
            return False
        if ca.path >= cb.path:
            return True  # equal iterators, a not textually first: never a ≺ b
        return not sa.out_of_order and sa.qual.q0 in sb.qual.extended and \
            ca.tiling.box_threads == 1

    def _point_forms(self, site: AccessSite) -> tuple[Affine | None, ...] | None:
        """The affine form of each point index (None for a window dimension), when they
        determine the iterators of every loop below the allocation; else None."""
        if site.id not in self._forms:
            self._forms[site.id] = _injective_forms(site, self.sizes)
        return self._forms[site.id]


def _injective_forms(site: AccessSite, sizes: tuple[ir.Sym, ...]
                     ) -> tuple[Affine | None, ...] | None:
    inner = [lp.sym for lp in site.ctx.loops if lp.sym not in site.alloc_loops]
    names = {lp.sym for lp in site.ctx.loops} | set(sizes)
    forms: list[Affine | None] = []
    for pt in site.element.points:
        form = None if pt is None else affine(pt)
        if pt is not None and form is None:
            return None
        for term in form or {}:
            if term is None or isinstance(term, ir.Sym) and term in names:
                continue
            if isinstance(term, ir.Sym) or _mentions(term, set(inner)):
                return None  # a name of unknown meaning, or an inner iterator under / or %
        forms.append(form)
    rows = [[Fraction(f.get(sym, 0)) for sym in inner] for f in forms if f is not None]
    return tuple(forms) if _rank(rows) == len(inner) else None


def _mentions(e: object, syms: set[ir.Sym]) -> bool:
    match e:
        case ir.Var(name=name):
            return name in syms
        case ir.BinOp(lhs=lhs, rhs=rhs):
            return _mentions(lhs, syms) or _mentions(rhs, syms)
        case ir.USub(arg=arg):
            return _mentions(arg, syms)
    return False


def _rank(rows: list[list[Fraction]]) -> int:
    """Rank of a small rational matrix (Gaussian elimination)."""
    rows = [list(r) for r in rows]
    rank = 0
    for col in range(len(rows[0]) if rows else 0):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][col] != 0:
                factor = rows[r][col] / rows[rank][col]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[rank])]
        rank += 1
    return rank
