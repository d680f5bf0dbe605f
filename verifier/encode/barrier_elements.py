"""Which barrier elements a multicast Arrive or a TMA's trailing barrier names, and the pairing
of the tags they attach with an Await (SEM-6.1, 6.3, 6.4, 6.5), as Z3 terms.

An Arrive `>> z[m, :] >> z[:, n]` tags the records it witnesses with every element it names,
numbered by its home's arrive count; a TMA `>> z[m, :]` tags its own records with every
element it names, each numbered by that element's own arrive count at the call (P₀). An Await
on z[e] retires a tag (z, e, c) when c ≤ a_max.
"""

from __future__ import annotations

import z3

from verifier.check.sites import AccessSite, ArriveSite, AwaitSite, ProgramModel
from verifier.encode.barrier_counts import BarrierCounts
from verifier.encode.instances import Encoder, Instance, equal_on
from verifier.encode.terms import conj, disj
from verifier.lang.ir import ir


def names(enc: Encoder, refs: tuple[tuple[ir.Expr | None, ...], ...], inst: Instance,
          elem: tuple[z3.ArithRef, ...]) -> z3.BoolRef:
    """`elem` is one of the elements the expressions name at `inst` (None: any index)."""
    zctx = enc.zctx
    options = []
    for ref in refs:
        options.append(conj([e == enc.value(p, inst.iters) for p, e in zip(ref, elem)
                             if p is not None], zctx))
    return disj(options, zctx)


def arrive_pairs(enc: Encoder, counts: BarrierCounts, model: ProgramModel, arr_site: ArriveSite,
                 arr: Instance, aw_site: AwaitSite, aw: Instance) -> z3.BoolRef:
    """The Await retires the Arrive's tag: it names the awaited element of the same barrier
    instance, and the home's arrive number is ≤ a_max (SEM-6.3, 6.4)."""
    decl = model.barriers[arr_site.barrier]
    elem = tuple(enc.value(e, aw.iters) for e in aw_site.element)
    home = tuple(enc.value(e, arr.iters) for e in arr_site.home)
    refs = arr_site.named or (tuple(arr_site.home),)
    # BW-5.5: a multicast tcgen05.commit's arrival at elem is numbered by elem's own count
    number = counts.arrives_before(decl, elem if arr_site.each_element else home, arr)
    return conj((names(enc, refs, arr, elem), equal_on(arr, aw, decl.alloc_loops, enc.zctx),
                 number <= counts.a_max(decl, aw_site, elem, aw)), enc.zctx)


def trailing_pairs(enc: Encoder, counts: BarrierCounts, model: ProgramModel, site: AccessSite,
                   a: Instance, aw_site: AwaitSite, aw: Instance) -> z3.BoolRef:
    """The Await retires the tag P₀ that the TMA access `a` carries (SEM-4.4, 6.5)."""
    assert site.trailing is not None
    decl = model.barriers[site.trailing.barrier]
    elem = tuple(enc.value(e, aw.iters) for e in aw_site.element)
    # a ring slot's handoff names arrive #0 of its element (DIAL-6)
    number = z3.IntVal(0, enc.zctx) if site.trailing.numbered_zero else \
        counts.arrives_before(decl, elem, a)
    return conj((names(enc, (site.trailing.points,), a, elem),
                 equal_on(a, aw, decl.alloc_loops, enc.zctx),
                 number <= counts.a_max(decl, aw_site, elem, aw)), enc.zctx)

