"""Barrier counters at a trace point and the obligations on them (SEM-6.4, 6.6, 6.7).

Counts are sums over the Arrive (Await) sites of a barrier variable of `counting.count_before`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import z3

from verifier.lang.ir import ir
from verifier.semantics.rings import ring_info
from verifier.semantics.schedules import Schedule
from verifier.check.sites import ArriveSite, AwaitSite, BarrierDecl, ProgramModel
from verifier.encode.counting import count_before
from verifier.encode.instances import Encoder, Instance
from verifier.encode.terms import address


class BarrierCounts:
    """Counter terms, memoised on the structure of their inputs (the same element and point
    terms give the same count in every obligation; a hit replays what building it noted, so
    an obligation's build is the same whether or not another built the count first)."""

    def __init__(self, enc: Encoder, model: ProgramModel) -> None:
        self.enc = enc
        self.model = model
        self._memo: dict[tuple, tuple[z3.ArithRef, int, frozenset[int], object]] = {}

    def _memoised(self, key: tuple, keep: object, make: "Callable[[], z3.ArithRef]"
                  ) -> z3.ArithRef:
        hit = self._memo.get(key)
        if hit is None:
            products, touched = self.enc.products, set(self.enc.touched)
            term = make()
            hit = (term, self.enc.products - products,
                   frozenset(self.enc.touched - touched), keep)
            self._memo[key] = hit
        else:
            for _ in range(hit[1]):
                self.enc.note_product()
            self.enc.touched |= hit[2]
        return hit[0]

    @staticmethod
    def _key(what: str, decl: BarrierDecl, elem: tuple[z3.ArithRef, ...], point: Instance,
             flag: object) -> tuple:
        return (what, decl.sym, tuple(address(e) for e in elem), id(point.ctx),
                tuple((s, address(v)) for s, v in point.iters.items()), flag)

    def arrives_before(self, decl: BarrierDecl, elem: tuple[z3.ArithRef, ...], point: Instance,
                       inclusive_textual: bool = False,
                       schedule: Schedule = Schedule.SEQUENTIAL) -> z3.ArithRef:
        """β(z[elem]).a just before `point` (SEM-2.3, SEM-6.3: only home counters move), in
        the sequential trace or the lockstep `schedule` (DIAL-11)."""
        return self._memoised(self._key("a", decl, elem, point, (inclusive_textual, schedule)),
                              (elem, point.ctx, tuple(point.iters.values())),
                              lambda: self._arrives_before(decl, elem, point,
                                                           inclusive_textual, schedule))

    def _arrives_before(self, decl: BarrierDecl, elem: tuple[z3.ArithRef, ...],
                        point: Instance, inclusive_textual: bool,
                        schedule: Schedule) -> z3.ArithRef:
        total: z3.ArithRef = z3.IntVal(0, self.enc.zctx)
        if decl.ring is not None and decl.pre_arrive:  # DIAL-3: arrive #0 is the pre-arrive
            total = z3.If(elem[decl.ring.dim] < decl.pre_arrive, z3.IntVal(1, self.enc.zctx),
                          total)
        for site in self.model.arrives:
            if site.barrier == decl.sym:
                total = total + count_before(self.enc, site.ctx, counted_index(site), elem,
                                             decl.alloc_loops, point.ctx, point.iters,
                                             not inclusive_textual, site,
                                             decl.ring is not None,
                                             site.on_behalf, schedule)
        return total

    def awaits_before(self, decl: BarrierDecl, elem: tuple[z3.ArithRef, ...], point: Instance
                      ) -> z3.ArithRef:
        """β(z[elem]).w just before `point`, for await-indexed barriers (w += 1 per Await)."""
        return self._memoised(self._key("w", decl, elem, point, False),
                              (elem, point.ctx, tuple(point.iters.values())),
                              lambda: self._awaits_before(decl, elem, point))

    def _awaits_before(self, decl: BarrierDecl, elem: tuple[z3.ArithRef, ...], point: Instance
                       ) -> z3.ArithRef:
        total: z3.ArithRef = z3.IntVal(0, self.enc.zctx)
        for site in self.model.awaits:
            if site.barrier == decl.sym:
                total = total + count_before(self.enc, site.ctx, site.element, elem,
                                             decl.alloc_loops, point.ctx, point.iters, True,
                                             site, decl.ring is not None)
        return total

    def a_max(self, decl: BarrierDecl, site: AwaitSite, elem: tuple[z3.ArithRef, ...],
              inst: Instance) -> z3.ArithRef:
        """The newest arrive number an Await instance retires (SEM-6.4; DIAL-4: arrive #0 of a
        one-shot ring element)."""
        if decl.ring is not None:
            return z3.IntVal(0, self.enc.zctx)
        if site.n >= 0:
            return self.arrives_before(decl, elem, inst) - site.n - 1
        return self.awaits_before(decl, elem, inst) - (~site.n)

    def await_sites(self, decl: BarrierDecl) -> list[AwaitSite]:
        return [s for s in self.model.awaits if s.barrier == decl.sym]


def counted_index(site: ArriveSite) -> tuple[ir.Expr, ...]:
    """The element index an Arrive site's instances count at: its home (SEM-6.3), or for a
    multicast tcgen05.commit every element it names (BW-5.5): its multicast dimensions pin
    nothing, so each instance counts once at every element of them."""
    if not site.each_element:
        return site.home
    cast = {k for ref in site.named for k, p in enumerate(ref) if p is None}
    return tuple(ir.Const(0, site.loc) if k in cast else h for k, h in enumerate(site.home))


def free_point(enc: Encoder, decl: BarrierDecl, tag: str) -> Instance:
    """The end of the barrier's allocation scope, as an instance over its allocation loops."""
    return enc.instance(decl.free_ctx, tag)


def element_vars(enc: Encoder, decl: BarrierDecl, tag: str
                 ) -> tuple[tuple[z3.ArithRef, ...], list[z3.BoolRef]]:
    elems, conds = [], []
    for k, extent in enumerate(decl.shape):
        v = z3.Int(f"{decl.sym.name}.elem{k}@{tag}", enc.zctx)
        elems.append(v)
        conds += [v >= 0, v < extent]
    return tuple(elems), conds


def last_instance(enc: Encoder, site: AwaitSite, point: Instance,
                  elem: tuple[z3.ArithRef, ...]) -> Instance:
    """The last instance of an Await site inside the allocation instance of `point`: shared
    loops at the point's values, thread loops pinned by the element, sequential loops at
    their last iteration (a witness for the final await count of a commit group)."""
    iters: dict[ir.Sym, z3.ArithRef] = {}
    env: dict[ir.Sym, z3.ArithRef] = {}
    pins = {e.name: v for e, v in zip(site.element, elem) if isinstance(e, ir.Var)}
    for lp in site.ctx.loops:
        if lp.sym in point.iters:
            iters[lp.sym] = point.iters[lp.sym]
        elif lp.sym in pins:
            iters[lp.sym] = pins[lp.sym]
        else:
            iters[lp.sym] = enc.value(lp.hi, env) - 1
        env[lp.sym] = iters[lp.sym]
    inst = Instance(site.ctx, iters, None, z3.BoolVal(True, enc.zctx))
    inst.valid = enc.validity(inst)
    return inst


def short_of_partner(counts: BarrierCounts, model: ProgramModel, decl: BarrierDecl,
                     elem: tuple[z3.ArithRef, ...], point: Instance, a_max: z3.ArithRef,
                     schedule: Schedule = Schedule.SEQUENTIAL) -> z3.BoolRef:
    """SEM-6.7 negated: some home h in the multicast group G(z[elem]) (SEM-6.1) has at most
    a_max arrives before `point`; without multicast G is the element itself. The group is a
    static function of the element (barrier shapes are constants), so the condition is a case
    split over the elements whose group is larger than themselves."""
    zctx = counts.enc.zctx
    own = counts.arrives_before(decl, elem, point, schedule=schedule) <= a_max
    info = ring_info(model.proc.body)
    cases = []
    ring = decl.ring.dim if decl.ring is not None else None
    for e in itertools.product(*(range(n) for n in decl.shape)):
        if ring is not None and e[ring] != 0:
            continue  # the ring dimension is never multicast (DIAL-2): it stays elem's
        group = [h for h in info.group(decl.sym, e, decl.shape) if h != e]
        if not group:
            continue
        here = z3.And(*[v == c for k, (v, c) in enumerate(zip(elem, e)) if k != ring])
        consts = [tuple(elem[k] if k == ring else z3.IntVal(c, zctx) for k, c in enumerate(h))
                  for h in group]
        cases.append(z3.And(here, z3.Or(*[counts.arrives_before(decl, h, point,
                                                                schedule=schedule) <= a_max
                                          for h in consts])))
    return z3.Or(own, *cases) if cases else own
