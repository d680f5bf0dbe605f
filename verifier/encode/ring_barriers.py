"""Obligations of the endgame dialect's ring barriers (specs/dialects.md DIAL-10, 11, 16).

A ring element completes with one Arrive (upstream's one-shot mbarrier): no Arrive instance
may find an earlier arrive on its home element, and none may arrive on an element its
`CudaMbarrierPreArrive(p)` pre-arrives (the pre-arrive counts as arrive #0, barrier_counts).
The negation asks Z3 for an Arrive instance whose home already has an arrive before it.
At the ring's free every slot has been recycled (DIAL-16): the negation asks for an element
with ring index ≥ depth that no Arrive reached before the end of the allocation's scope.
An Await is satisfied when one schedule satisfies every ring Await (DIAL-11): the shared
deadlock obligation (SEM-6.7 with a_max = 0, in the sequential trace) of a ring Await is
conjoined with `lockstep_missed`, some ring Await the lockstep schedule leaves unsatisfied.
Non-goals: slot reuse, which the handoff and recycling storage sites of
check/static_rings.py cover.
"""

from __future__ import annotations

import z3

from verifier.check.sites import ArriveSite, BarrierDecl, ProgramModel, TmaSite
from verifier.encode.barrier_counts import BarrierCounts, free_point, short_of_partner
from verifier.encode.instances import Encoder
from verifier.semantics.schedules import Schedule


def one_shot_sites(model: ProgramModel) -> list[ArriveSite]:
    return [s for s in model.arrives if model.barriers[s.barrier].ring is not None]


def second_arrive(enc: Encoder, counts: BarrierCounts, model: ProgramModel, site: ArriveSite
                  ) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
    """DIAL-10 negated: an instance of `site` whose home element was arrived on before it."""
    decl = model.barriers[site.barrier]
    inst = enc.instance(site.ctx, "q")
    home = tuple(enc.value(e, inst.iters) for e in site.home)
    return [inst.valid, counts.arrives_before(decl, home, inst) >= 1], dict(inst.names)


def ring_trailing_sites(model: ProgramModel) -> list[TmaSite]:
    return [t for t in model.tmas if model.barriers[t.trailing.barrier].ring is not None]


def trailing_after_arrive(enc: Encoder, counts: BarrierCounts, model: ProgramModel,
                          site: TmaSite) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
    """DIAL-10 negated: an instance of a TMA whose trailing element (any of a multicast's) was
    arrived on (or pre-arrived) before it."""
    decl = model.barriers[site.trailing.barrier]
    inst = enc.instance(site.ctx, "t")
    elem, conds = [], [inst.valid]
    for k, (pt, extent) in enumerate(zip(site.trailing.points,
                                         decl.logical_shape(site.loc))):
        if pt is not None:
            elem.append(enc.value(pt, inst.iters))
            continue
        v = z3.Int(f"{decl.sym.name}.elem{k}@t", enc.zctx)
        conds += [v >= 0, v < enc.value(extent, inst.iters)]
        elem.append(v)
    conds.append(counts.arrives_before(decl, tuple(elem), inst) >= 1)
    return conds, dict(inst.names)


def ring_decls(model: ProgramModel) -> list[BarrierDecl]:
    return [d for d in model.barriers.values() if d.ring is not None]


def unrecycled_slot(enc: Encoder, counts: BarrierCounts, decl: BarrierDecl
                    ) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
    """DIAL-16 negated: an element y ≥ depth (logical extent on the ring dimension) that no
    Arrive reached before the free, so the slot of y - depth is freed unrecycled."""
    assert decl.ring is not None
    point = free_point(enc, decl, "f")
    elem, conds = [], [point.valid]
    for k, extent in enumerate(decl.logical_shape(decl.loc)):
        v = z3.Int(f"{decl.sym.name}.elem{k}@f", enc.zctx)
        lo = decl.ring.depth if k == decl.ring.dim else 0
        conds += [v >= lo, v < enc.value(extent, point.iters)]
        elem.append(v)
    conds.append(counts.arrives_before(decl, tuple(elem), point) == 0)
    names = dict(point.names)
    names.update({f"elem{k}": v for k, v in enumerate(elem)})
    return conds, names


def lockstep_missed(enc: Encoder, counts: BarrierCounts, model: ProgramModel
                    ) -> tuple[z3.BoolRef, dict[str, z3.ArithRef]]:
    """DIAL-11 for the lockstep schedule, negated: an instance of some ring Await some home of
    whose group has no arrive before it when sibling thread-loop iterations run together
    (semantics/schedules.py). The same term in every ring Await's obligation."""
    cases, names = [], {}
    sites = [s for s in model.awaits if model.barriers[s.barrier].ring is not None]
    for k, site in enumerate(sites):
        decl = model.barriers[site.barrier]
        inst = enc.instance(site.ctx, f"lockstep{k}")
        elem = tuple(enc.value(e, inst.iters) for e in site.element)
        a_max = counts.a_max(decl, site, elem, inst)
        cases.append(z3.And(inst.valid, a_max >= 0, short_of_partner(
            counts, model, decl, elem, inst, a_max, Schedule.LOCKSTEP)))
        names.update(inst.names)
    return z3.Or(*cases), names
