"""Transaction-count obligations of TMA loads (TX-1, SEM-8.6), as Z3 queries.

A TMA load's issuing CTA expects `ncta * box * 4` bytes on its own element of the trailing
mbarrier, in the phase of that element's arrive count; each of the `ncta` issuers completes
`box * sizeof(element)` bytes on every destination's element in the *issuer's* phase (the
hardware addresses the same ring slot in each CTA). Every phase balances iff

* the bytes agree: `ncta * box * 4 == ncta * box * sizeof(element)` (a static fact: the
  obligation is the site's instance being executed at all), and
* for multicast (ncta > 1), the phases agree: two issuers of one instance (same sequential
  and task iterators, different CTAs) see the same arrive count on their own elements.

The machine's ledger (semantics/transactions.py) replays either failure as a
`transaction-count` finding.
"""

from __future__ import annotations

import z3

from verifier.check.sites import ProgramModel, TmaSite
from verifier.encode.barrier_counts import BarrierCounts
from verifier.encode.instances import Encoder, Instance


def _own(enc: Encoder, site: TmaSite, inst: Instance) -> tuple[z3.ArithRef, ...]:
    return tuple(enc.value(e, inst.iters) for e in site.own)


def checks(site: TmaSite) -> list[str]:
    """The obligations the site needs: "bytes" when its expect-tx and complete-tx byte counts
    differ (a static fact), "phase" when it multicasts."""
    kinds = ["bytes"] if site.expect_bytes != site.ncta * site.delivered_bytes else []
    return kinds + (["phase"] if site.ncta > 1 and site.dest_sym is not None else [])


def byte_mismatch(enc: Encoder, site: TmaSite) -> list[z3.BoolRef]:
    """Constraints of a run where the site's phase bytes differ: any run executing it (asked
    only when `checks` lists "bytes")."""
    assert "bytes" in checks(site)
    inst = enc.instance(site.issuer_ctx, f"tx{site.id}")
    return [inst.valid]


def phase_disagreement(enc: Encoder, counts: BarrierCounts, model: ProgramModel,
                       site: TmaSite) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
    """Two issuing CTAs of one multicast instance whose own elements' arrive counts differ
    (asked only when `checks` lists "phase")."""
    assert "phase" in checks(site) and site.dest_sym is not None
    decl = model.barriers[site.trailing.barrier]
    a = enc.instance(site.issuer_ctx, f"txa{site.id}")
    pinned = {lp.sym: a.iters[lp.sym] for lp in site.issuer_ctx.loops
              if lp.sym != site.dest_sym}
    b = enc.instance(site.issuer_ctx, f"txb{site.id}", pinned)
    differ = counts.arrives_before(decl, _own(enc, site, a), a) != \
        counts.arrives_before(decl, _own(enc, site, b), b)
    return [a.valid, b.valid, differ], {**a.names, **b.names}
