"""Obligations settled without a solver (specs/verification.md "Pruning", PR-1..PR-6).

Each rule is a static sufficient condition, cheap enough to run on every pair of a proc with
thousands of statements:

* PR-1 different allocations: the pair is never formed (obligations.py).
* PR-2 disjoint index ranges: in some dimension the two accesses' index intervals (loop ranges
  with constant bounds, interval arithmetic) cannot meet: no common element.
* PR-3 dominating fence: a Fence run by every thread of the task, valid wherever both accesses
  are, sits between them in trace order for every pair of instances, witnesses the earlier
  access's qual-tl and grants the flag the later one needs: the level-0 query is unsat by the
  chain of length 1 through that fence's instance.
* PR-5 bounds by intervals: every index interval lies in [0, least extent).
* PR-4 nearest conflicting access: a non-atomic write to the same element sits between every
  pair of instances; the machine discards the earlier record there (SEM-2.6), so the first
  hazard of any run is never such a pair and the pair is not an obligation at all.
* PR-6 sites that never run: an empty loop interval or an `if` the intervals refute; sync
  events at such sites are left out of the fence chains (visibility.sync_events).

Everything here reads the static model (check.sites) and the rule tables; no Z3.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass

from verifier import collectives
from verifier.lang.ir import ir
from verifier.semantics import rules
from verifier.semantics.rules import AccessKind, Flag, drops_record
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


# ---------------------------------------------------------------- PR-4 patterns

def _rename(e: ir.Expr, names: dict[ir.Sym, ir.Sym]) -> ir.Expr:
    match e:
        case ir.Var(name=name) if name in names:
            return ir.Var(names[name], e.loc)
        case ir.BinOp(op=op, lhs=lhs, rhs=rhs):
            return ir.BinOp(op, _rename(lhs, names), _rename(rhs, names), e.loc)
        case ir.USub(arg=arg):
            return ir.USub(_rename(arg, names), e.loc)
    return e


@dataclass(frozen=True)
class _Pattern:
    """What an access touches, with its loops below depth m renamed by position: two sites with
    equal patterns at depth m touch the same elements for equal iterators above m."""

    outer: tuple[Loop, ...]
    inner: tuple[tuple[ir.Expr, ir.Expr], ...]
    element: tuple[object, ...]


def _pattern(site: AccessSite, m: int) -> tuple[_Pattern, frozenset[tuple[ir.Expr, bool]]]:
    inner_loops = site.ctx.loops[m:]
    names = {lp.sym: ir.Sym(f"inner{k}", -1 - k) for k, lp in enumerate(inner_loops)}
    inner = tuple((_rename(lp.lo, names), _rename(lp.hi, names)) for lp in inner_loops)
    element = tuple(
        ("pt", _rename(pt, names)) if pt is not None else
        ("iv", _rename(iv[0], names), _rename(iv[1], names)) if iv is not None else ("?",)
        for pt, iv in zip(site.element.points, site.element.intervals))
    conds = frozenset((_rename(c, names), pol) for c, pol in site.ctx.conds)
    return _Pattern(site.ctx.loops[:m], inner, (site.buf,) + element), conds


class Pruner:
    """The static rules for one proc's hazard pairs."""

    def __init__(self, model: ProgramModel) -> None:
        self.model = model
        self.sizes = tuple(model.sizes)
        self._intervals: dict[int, list[Interval]] = {}
        self._patterns: dict[tuple[int, int], tuple[_Pattern, frozenset]] = {}
        self.fences = sorted((f for f in model.fences if self._everyone(f)),
                             key=lambda f: f.ctx.path)
        self._fence_paths = [f.ctx.path for f in self.fences]

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
        da = sa.ctx.device
        if da is None or da is not sb.ctx.device or sb.ctx.device is None:
            return False
        if not set(da.outer_loops + da.task_loops) <= set(sa.alloc_loops):
            return False  # same allocation instance does not imply the same task
        pa, pb = sa.ctx.path, sb.ctx.path
        shared = _common(sa.ctx.loops, sb.ctx.loops)
        lo, hi = (pa, pb) if pa < pb else (min(pa, pb), None)
        start = 0 if hi is None else bisect.bisect_right(self._fence_paths, lo)
        for f in self.fences[start:]:
            if hi is not None and f.ctx.path >= hi:
                break
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

    # ------------------------------------------------------------ PR-4

    def dominated_pairs(self, sites: list[AccessSite]) -> set[tuple[int, int]]:
        """(earlier id, later id) of the pairs of `sites` (one variable) with a non-atomic
        write to the same element between every pair of their instances."""
        writes = sorted((s for s in sites if not s.is_free and  # drop even mutate records
                         drops_record(AccessKind.write, s.kind)), key=lambda s: s.ctx.path)
        # writes by (depth m, pattern at m), in textual order: the candidates that can cover
        # a site at depth m are exactly those of its own pattern's bucket
        buckets: dict[tuple[int, _Pattern], list[AccessSite]] = {}
        for w in writes:
            for m in range(len(w.ctx.loops) + 1):
                buckets.setdefault((m, self._pattern(w, m)[0]), []).append(w)
        self._cover_cache: dict[tuple[int, int], tuple[list[AccessSite], list]] = {}
        out: set[tuple[int, int]] = set()
        for sb in sites:
            for sa in sites:
                if sa.is_free or sa is sb:
                    continue
                if self._dominated(sa, sb, buckets):
                    out.add((sa.id, sb.id))
        return out

    def _dominated(self, sa: AccessSite, sb: AccessSite,
                   buckets: dict[tuple[int, _Pattern], list[AccessSite]]) -> bool:
        """Some write C covers a (or b) at the depth m of the loops it shares with both and
        lies between them (the PR-4 cases, `_anchors`)."""
        pa, pb = sa.ctx.path, sb.ctx.path
        shared = _common(sa.ctx.loops, sb.ctx.loops)
        ends = [(sa, sb, "a")] + ([] if sb.is_free else [(sb, sa, "b")])
        for m in (range(shared + 1) if pa < pb else (shared,)):
            for sx, other, anchor in ends:
                cs, ps = self._covering(sx, m, buckets)
                if not cs:
                    continue
                if pa < pb:  # between textually: either anchor
                    lo, hi = bisect.bisect_right(ps, pa), bisect.bisect_left(ps, pb)
                elif anchor == "a":  # a in an earlier iteration: after a, at a's iterators
                    lo, hi = bisect.bisect_right(ps, pa), len(ps)
                else:  # before b, at b's iterators
                    lo, hi = 0, bisect.bisect_left(ps, pb)
                for sc in cs[lo:hi]:
                    if sc is other or _common(sc.ctx.loops, other.ctx.loops) != m:
                        continue
                    if anchor in _anchors(pa, sc.ctx.path, pb, m == shared):
                        return True
        return False

    def _covering(self, sx: AccessSite, m: int,
                  buckets: dict[tuple[int, _Pattern], list[AccessSite]]
                  ) -> tuple[list[AccessSite], list[tuple[int, ...]]]:
        """The writes (in textual order, with their paths) that share exactly m loops with x
        and cover x's element at depth m: computed once per (x, m), not once per pair."""
        key = (sx.id, m)
        hit = self._cover_cache.get(key)
        if hit is None:
            ws = buckets.get((m, self._pattern(sx, m)[0]), [])
            cs = [c for c in ws if c is not sx and _common(c.ctx.loops, sx.ctx.loops) == m
                  and self._covers(c, sx, m)]
            hit = self._cover_cache[key] = (cs, [c.ctx.path for c in cs])
        return hit

    def _covers(self, sc: AccessSite, sx: AccessSite, m: int) -> bool:
        """Some instance of sc, equal to x on the first m loops, touches x's element."""
        pc, conds_c = self._pattern(sc, m)
        px, conds_x = self._pattern(sx, m)
        return pc == px and conds_c <= conds_x

    def _pattern(self, site: AccessSite, m: int) -> tuple[_Pattern, frozenset]:
        key = (site.id, m)
        if key not in self._patterns:
            self._patterns[key] = _pattern(site, m)
        return self._patterns[key]
