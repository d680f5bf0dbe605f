"""Records dropped between two accesses (SEM-2.6, semantics.md §12.1 "last writer"), as a Z3
condition the hazard query may assume false.

A non-atomic mutate of x[i] replaces every earlier record of x[i]; any mutate drops the read
records. So when some mutate instance c of the same element runs strictly between a and b, b
is never checked against a's record: the pair (a, b) needs nothing. (c itself is checked
against a by the obligation (a, c); if that one fails the proc is refuted anyway.) The
instances of c tried are the anchored witness instances of the visibility encoding; assuming
only that *those* do not occur is weaker than assuming no instance does, so the hazard query
keeps every model it would have without this condition (sound), and loses the spurious ones
where an accumulator was overwritten (zero-fill, then wgmma, then a read).
"""

from __future__ import annotations

import z3

from verifier.check.sites import AccessSite
from verifier.lang.ir import ir
from verifier.encode.instances import Encoder, Instance, before, equal_on
from verifier.encode.terms import conj, disj
from verifier.encode.chains import BetweenIndex, may_precede
from verifier.semantics.rules import drops_record


def touches(enc: Encoder, site: AccessSite, inst: Instance, elem: tuple[z3.ArithRef, ...]
            ) -> z3.BoolRef:
    """`elem` is among the elements the instance of `site` touches (SEM-4.3, clipping)."""
    parts: list[z3.BoolRef] = []
    shape = [enc.value(d, {}) for d in site.shape]
    el = site.element
    for k, (pt, iv) in enumerate(zip(el.points, el.intervals)):
        if k >= len(elem):
            break
        e = elem[k]
        if pt is not None:
            parts.append(e == enc.value(pt, inst.iters))
            continue
        assert iv is not None
        lo = enc.value(iv[0], inst.iters)
        parts += [e >= lo, e < enc.value(iv[1], inst.iters)]
        if k < len(el.limits) and el.limits[k] is not None:
            parts.append(e - lo < enc.value(el.limits[k], inst.iters))  # type: ignore[arg-type]
        if el.clip_to_shape and k < len(shape):
            parts += [e >= 0, e < shape[k]]
    return conj(parts, enc.zctx)


def clipped_bounds(enc: Encoder, site: AccessSite, inst: Instance, shape: list[z3.ArithRef]
                   ) -> tuple[list[z3.BoolRef], list[z3.BoolRef]]:
    """SEM-4.3 bounds of one access: (ways to leave the tensor, conditions that the touched set
    is non-empty — given only for a bounds-predicated store, whose window is restricted to
    relative indices below its limits and may be empty)."""
    bad: list[z3.BoolRef] = []
    nonempty: list[z3.BoolRef] = []
    el = site.element
    for k, (pt, iv) in enumerate(zip(el.points, el.intervals)):
        if k >= len(shape):
            break
        if pt is not None:
            v = enc.value(pt, inst.iters)
            bad.append(z3.Or(v < 0, v >= shape[k]))
            continue
        assert iv is not None
        lo, hi = enc.value(iv[0], inst.iters), enc.value(iv[1], inst.iters)
        if k < len(el.limits) and el.limits[k] is not None:
            lim = lo + enc.value(el.limits[k], inst.iters)  # type: ignore[arg-type]
            top = z3.If(lim < hi, lim, hi)
            nonempty.append(top > lo)
            bad.append(z3.Or(lo < 0, top > shape[k], lo > hi))
        else:
            bad.append(z3.Or(lo < 0, hi > shape[k], lo > hi))
    if any(k < len(el.limits) and el.limits[k] is not None for k in range(len(el.points))):
        return bad, nonempty
    return bad, []


def drops(earlier: AccessSite, middle: AccessSite) -> bool:
    """Does a mutate at `middle` drop `earlier`'s record (SEM-2.6, `rules.drops_record`)? A
    free is not counted as a kill (fewer kills: more pairs checked, still sound)."""
    return not middle.is_free and drops_record(earlier.kind, middle.kind)


def may_lie_between(sa: AccessSite, sc: AccessSite, sb: AccessSite) -> bool:
    """Can an instance of `sc` in a's allocation instance lie strictly between a and b? When
    that allocation is inside the task loops, such an instance runs in a's task (and b's: the
    query asks for the same allocation instance), so it must follow a and precede b within
    one task, which `chains.may_precede` decides from the loop structure (SEM-1.8). False
    only where every `before(a, c) ∧ before(c, b)` is unsat, so leaving the site out of the
    kills changes no query's models."""
    dev = sa.ctx.device
    if dev is None or sc.ctx.device is not dev or sb.ctx.device is not dev or \
            not set(dev.outer_loops + dev.task_loops) <= set(sa.alloc_loops):
        return True
    return may_precede(sa.ctx, sc.ctx) and may_precede(sc.ctx, sb.ctx)


class KillSites:
    """The accesses of each variable, and those that may lie between a and b
    (`may_lie_between`) found without looking at every one (`chains.BetweenIndex`): with
    thousands of statements on one variable, a query looks at the few near its pair."""

    def __init__(self, accesses: list[AccessSite]) -> None:
        self._sites: dict[ir.Sym, list[AccessSite]] = {}
        for site in accesses:
            self._sites.setdefault(site.buf, []).append(site)
        self._index: dict[ir.Sym, BetweenIndex] = {}
        self._foreign: dict[tuple[ir.Sym, int], list[int]] = {}

    def around(self, sa: AccessSite, sb: AccessSite) -> list[AccessSite]:
        """A sublist, in order, of a's variable's accesses holding every site for which
        `may_lie_between(sa, site, sb)` holds."""
        sites = self._sites.get(sa.buf, [])
        dev = sa.ctx.device
        if dev is None or sb.ctx.device is not dev or \
                not set(dev.outer_loops + dev.task_loops) <= set(sa.alloc_loops):
            return sites
        index = self._index.get(sa.buf)
        if index is None:
            index = self._index[sa.buf] = BetweenIndex([(s.ctx, s.ctx) for s in sites])
        foreign = self._foreign.get((sa.buf, id(dev)))
        if foreign is None:  # sites of another device: `may_lie_between` keeps them
            foreign = self._foreign[(sa.buf, id(dev))] = \
                [k for k, s in enumerate(sites) if s.ctx.device is not dev]
        found = set(index.candidates(sa.ctx, sb.ctx)).union(foreign)
        return [sites[k] for k in sorted(found)]


def killed(enc: Encoder, sites: list[AccessSite], witnesses: object, sa: AccessSite,
           a: Instance, sb: AccessSite, b: Instance, elem: tuple[z3.ArithRef, ...]
           ) -> z3.BoolRef:
    """Some anchored instance of a dropping mutate of `elem` lies strictly between a and b.
    `sites`: the accesses of a's variable that may lie between, in the model's order
    (`KillSites.around`); `witnesses(ctx, a, b)` gives the anchored instances
    (visibility.VisibilityBuilder)."""
    terms: list[z3.BoolRef] = []
    if a.thread is None or b.thread is None:  # witnesses anchor at device threads only
        return z3.BoolVal(False, enc.zctx)
    for sc in sites:
        if sc.buf != sa.buf or not sc.tracked or not drops(sa, sc):
            continue
        if sc.ctx.device is None:  # a CPU-scope mutate has no thread to anchor at: it is
            continue  # not counted as a kill (fewer kills: more pairs checked, still sound)
        if not may_lie_between(sa, sc, sb):
            continue  # its every disjunct would be unsat (ping-pong: O(P) sites per pair)
        for c in witnesses(sc.ctx, a, b):  # type: ignore[operator]
            terms.append(conj((c.valid, equal_on(a, c, sa.alloc_loops, enc.zctx),
                               before(a, c, enc.zctx), before(c, b, enc.zctx),
                               touches(enc, sc, c, elem)), enc.zctx))
    return disj(terms, enc.zctx)
