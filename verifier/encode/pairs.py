"""Hazard pairs (PR-4, specs/verification.md): the ordered pairs of one variable's accesses
that are obligations, found without visiting every pair.

A pair (a, b) is left out when a non-atomic write C of the same element lies between every
instance pair a ≺ b (PR-4). With d the depth of the loops a and b share (their lowest common
loop L), the rule's cases reduce to two covers per site and depth (the proof is in the spec):

* N(x, d), the textually first write after x in L, outside x's own child of L (the loop at
  depth d + 1 holding x, or x itself), that covers x at depth d (`pattern`: same loops up to
  d, identical inner loops and element, a subset of x's `if` conditions); P(x, d) the last
  such write before x.
* a textually before b: the pair is left out iff N(a, d) lies before b's child of L, or b is
  not a free and P(b, d) lies after a's child.
* a after b (a ran in an earlier iteration of L or an outer loop): left out iff N(a, d) or
  (b not a free) P(b, d) exists.
* a = b (two instances of one site): always kept, as before this module.

For each loop L the sites below it are swept once in textual order (an active set of the
earlier sites whose N is not yet passed), so the work is the number of sites times their
depth plus the pairs kept, not the number of pairs: a kernel of 10,000 statements writing one
element keeps O(10,000) pairs of 5·10^7. Everything here is static; no Z3.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterator
from dataclasses import dataclass

from verifier.check.sites import AccessSite, Loop
from verifier.lang.ir import ir
from verifier.semantics.rules import AccessKind, drops_record

Path = tuple[int, ...]


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
class Pattern:
    """What an access touches, with its loops below depth m renamed by position: two sites with
    equal patterns at depth m touch the same elements for equal iterators above m."""

    outer: tuple[Loop, ...]
    inner: tuple[tuple[ir.Expr, ir.Expr], ...]
    element: tuple[object, ...]


def pattern(site: AccessSite, m: int) -> tuple[Pattern, frozenset[tuple[ir.Expr, bool]]]:
    """The site's pattern at depth m and its `if` conditions, renamed the same way."""
    inner_loops = site.ctx.loops[m:]
    names = {lp.sym: ir.Sym(f"inner{k}", -1 - k) for k, lp in enumerate(inner_loops)}
    inner = tuple((_rename(lp.lo, names), _rename(lp.hi, names)) for lp in inner_loops)
    element = tuple(
        ("pt", _rename(pt, names)) if pt is not None else
        ("iv", _rename(iv[0], names), _rename(iv[1], names)) if iv is not None else ("?",)
        for pt, iv in zip(site.element.points, site.element.intervals))
    conds = frozenset((_rename(c, names), pol) for c, pol in site.ctx.conds)
    return Pattern(site.ctx.loops[:m], inner, (site.buf,) + element), conds


def is_cover(site: AccessSite) -> bool:
    """A write that drops every earlier record of the elements it touches (SEM-2.6)."""
    return not site.is_free and drops_record(AccessKind.write, site.kind)


class _Sweep:
    """One variable's sites with their loop keys, child spans and covers (N, P)."""

    def __init__(self, sites: list[AccessSite]) -> None:
        self.sites = sorted(sites, key=lambda s: s.ctx.path)
        canon: dict[Loop, int] = {}  # loops by value, as `pruning._common` compares them
        self.keys = {s.id: tuple(canon.setdefault(lp, len(canon)) for lp in s.ctx.loops)
                     for s in self.sites}
        self.spans: dict[tuple[int, ...], tuple[Path, Path]] = {}  # loop prefix -> paths
        for s in self.sites:
            key = self.keys[s.id]
            for m in range(1, len(key) + 1):
                lo, hi = self.spans.get(key[:m], (s.ctx.path, s.ctx.path))
                self.spans[key[:m]] = (min(lo, s.ctx.path), max(hi, s.ctx.path))
        self.patterns: dict[tuple[int, int], tuple[int, frozenset]] = {}
        self._interned: dict[tuple[int, Pattern], int] = {}  # patterns hashed once each
        self.buckets: dict[int, list[AccessSite]] = {}
        for w in self.sites:
            if is_cover(w):
                for m in range(len(w.ctx.loops) + 1):
                    self.buckets.setdefault(self.pattern(w, m)[0], []).append(w)
        self.bucket_paths = {k: [w.ctx.path for w in ws] for k, ws in self.buckets.items()}

    def pattern(self, site: AccessSite, m: int) -> tuple[int, frozenset]:
        """The site's pattern at depth m (as a number: equal numbers, equal patterns) and
        its renamed `if` conditions."""
        key = (site.id, m)
        hit = self.patterns.get(key)
        if hit is None:
            pat, conds = pattern(site, m)
            number = self._interned.setdefault((m, pat), len(self._interned))
            hit = self.patterns[key] = (number, conds)
        return hit

    def child(self, x: AccessSite, m: int) -> tuple[Path, Path]:
        """First and last path (among this variable's sites) of x's child of its depth-m
        loop: the loop at depth m + 1 holding x, or x itself."""
        key = self.keys[x.id]
        return self.spans[key[:m + 1]] if len(key) > m else (x.ctx.path, x.ctx.path)

    def cover(self, x: AccessSite, m: int, after: bool) -> AccessSite | None:
        """N(x, m) (after) or P(x, m): the nearest write outside x's child of its depth-m loop
        that covers x at depth m (PR-4)."""
        pat, conds = self.pattern(x, m)
        bucket = self.buckets.get(pat)
        if not bucket:
            return None
        paths = self.bucket_paths[pat]
        start, end = self.child(x, m)
        order = range(bisect.bisect_right(paths, end), len(bucket)) if after else \
            range(bisect.bisect_left(paths, start) - 1, -1, -1)
        for k in order:  # the first one whose conditions x has (without any: the first)
            if self.pattern(bucket[k], m)[1] <= conds:
                return bucket[k]
        return None


def kept_pairs(sites: list[AccessSite]) -> Iterator[tuple[AccessSite, AccessSite]]:
    """(earlier, later) for every pair of one variable's tracked sites that PR-4 keeps, frees
    never earlier; in no particular order. Pairs that need no flag (two reads) are among them:
    the caller asks `required_flag`."""
    sweep = _Sweep(sites)
    yield from ((s, s) for s in sweep.sites if not s.is_free)  # PR-4 leaves these alone
    groups: dict[tuple[int, ...], list[AccessSite]] = {}
    for s in sweep.sites:  # each site is below every prefix of its loops
        key = sweep.keys[s.id]
        for m in range(len(key) + 1):
            groups.setdefault(key[:m], []).append(s)
    for prefix, members in groups.items():
        m = len(prefix)
        after = {s.id: sweep.cover(s, m, True) for s in members if not s.is_free}
        before = {s.id: None if s.is_free else sweep.cover(s, m, False) for s in members}
        yield from _textual(sweep, m, members, after, before)
        yield from _carried(sweep, m, members, after, before)


def _textual(sweep: _Sweep, m: int, members: list[AccessSite],
             after: dict[int, AccessSite | None], before: dict[int, AccessSite | None]
             ) -> Iterator[tuple[AccessSite, AccessSite]]:
    """Pairs a before b textually in different children of the depth-m loop: a is active
    from its child on until N(a) lies before b's child; b takes the active sites at or after
    the child of P(b)."""
    active: dict[bool, tuple[list[Path], list[AccessSite]]] = {True: ([], []), False: ([], [])}
    expiry: list[tuple[Path, Path, bool]] = []  # (N's path, a's path, a reads)
    k = 0
    while k < len(members):
        start, end = sweep.child(members[k], m)
        child = []
        while k < len(members) and members[k].ctx.path <= end:
            child.append(members[k])
            k += 1
        while expiry and expiry[0][0] < start:
            _, path, reads = heapq.heappop(expiry)
            paths, sites = active[reads]
            i = bisect.bisect_left(paths, path)
            del paths[i], sites[i]
        for b in child:
            p = before[b.id]
            low = sweep.child(p, m)[0] if p is not None else ()
            for reads in ((False,) if b.kind is AccessKind.read else (False, True)):
                paths, sites = active[reads]
                for a in sites[bisect.bisect_left(paths, low):]:
                    yield a, b
        for a in child:
            if a.is_free:
                continue
            reads = a.kind is AccessKind.read
            active[reads][0].append(a.ctx.path)
            active[reads][1].append(a)
            n = after[a.id]
            if n is not None:
                heapq.heappush(expiry, (n.ctx.path, a.ctx.path, reads))


def _carried(sweep: _Sweep, m: int, members: list[AccessSite],
             after: dict[int, AccessSite | None], before: dict[int, AccessSite | None]
             ) -> Iterator[tuple[AccessSite, AccessSite]]:
    """Pairs a after b (a in an earlier iteration of a shared loop): kept iff a has no N
    and b no P at depth m."""
    tails: dict[bool, tuple[list[Path], list[AccessSite]]] = {True: ([], []), False: ([], [])}
    for b in members:
        if b.is_free or before[b.id] is None:
            tails[b.kind is AccessKind.read][0].append(b.ctx.path)
            tails[b.kind is AccessKind.read][1].append(b)
    for a in members:
        if a.is_free or after[a.id] is not None:
            continue
        start = sweep.child(a, m)[0]
        for reads in ((False,) if a.kind is AccessKind.read else (False, True)):
            paths, sites = tails[reads]
            yield from ((a, b) for b in sites[:bisect.bisect_left(paths, start)])
