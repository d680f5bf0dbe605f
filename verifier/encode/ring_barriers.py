"""Obligations of the endgame dialect's ring barriers (specs/dialects.md DIAL-10).

A ring element completes with one Arrive (upstream's one-shot mbarrier): no Arrive instance
may find an earlier arrive on its home element, and none may arrive on an element its
`CudaMbarrierPreArrive(p)` pre-arrives (the pre-arrive counts as arrive #0, barrier_counts).
The negation asks Z3 for an Arrive instance whose home already has an arrive before it.
Non-goals: pairing, deadlocks and slot reuse, which the shared obligations cover (SEM-6.7
with a_max = 0; the handoff and recycling storage sites of check/static_rings.py).
"""

from __future__ import annotations

import z3

from verifier.check.sites import ArriveSite, ProgramModel
from verifier.encode.barrier_counts import BarrierCounts
from verifier.encode.instances import Encoder


def one_shot_sites(model: ProgramModel) -> list[ArriveSite]:
    return [s for s in model.arrives if model.barriers[s.barrier].ring is not None]


def second_arrive(enc: Encoder, counts: BarrierCounts, model: ProgramModel, site: ArriveSite
                  ) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
    """DIAL-10 negated: an instance of `site` whose home element was arrived on before it."""
    decl = model.barriers[site.barrier]
    inst = enc.instance(site.ctx, "q")
    home = tuple(enc.value(e, inst.iters) for e in site.home)
    return [inst.valid, counts.arrives_before(decl, home, inst) >= 1], dict(inst.names)
