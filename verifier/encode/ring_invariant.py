"""The mbarrier ring invariant SEM-6.8 as Z3 obligations, one per Arrive site on an mbarrier.

SEM-6.8 asks, for every element of z with ring depth d, that the n-th non-trivial Await on z
precede arrive #(n + d) in the completion order ≺. We discharge it through one counting lemma
per Arrive site: with g = guardedBy(z), arrive #x on z[e] is preceded in the trace, on the
threads that execute it, by the Await on g[e] numbered x + off (off = 0 when z is guarded by
another barrier, off = -1 when self-guarded). LANG-5.12 (ERR-A24, checked statically) makes the
Awaits on g run on the same collective as the Arrives on z, so that Await is a po-predecessor.
Composing the lemmas around the guard cycle (each Await #y on g pairs with arrive #(y - lag g)
on g) gives: arrive #x on z ≻ non-trivial await #(x - D) on z, D = Σ_cycle (lag - off), and D
equals the ring depth d of LANG-5.19 in both cases, so the invariant follows. A lemma that
fails is a candidate `mbarrier ring overrun` (ERR-V09), replayed on the machine, whose check is
the completion order itself (semantics/rings.py); a lemma failure the machine does not confirm
comes back `unknown`, never `refuted`.

The chain only uses the lemma of z at arrive numbers x ≥ s(z) = lag(g) - off: a chain that
starts at some Arrive numbered ≥ d and reaches z has lost at most D - s(z) on the way. The
lemma is therefore asked for x ≥ s(z) only (s = d for a self-guarded barrier).

Multicast (SEM-6.1, 6.8): an Arrive with home e reuses the ring slot of every element b it
names, and the invariant is asked of each such b. Around the guard cycle an Await on g[s]
pairs with the arrives of every home in G(g[s]) (the pair edges of SEM-6.8), so the chain from
the Arrive at home e reaches the awaits on z at the elements `reached(e)` (`_reached`), with the
same arrive numbers as for the home. Where the Arrive names an element outside reached(e) the
lemma gives nothing for it, and such a home counts as broken: a candidate the machine replays.
A self-guarded z reaches only its own element (the pair step lands on arrives, one number
short of the await the invariant needs), so a self-guarded multicast Arrive is a candidate
whenever the lemma is asked (x >= d).
"""

from __future__ import annotations

import itertools

import z3

from verifier.diagnostics import InternalError
from verifier.lang.ir import ir
from verifier.semantics.rings import RingInfo, ring_info
from verifier.check.sites import ArriveSite, AwaitSite, ProgramModel
from verifier.encode.barrier_counts import BarrierCounts
from verifier.encode.instances import Encoder, Instance


def ring_lemma(enc: Encoder, counts: BarrierCounts, model: ProgramModel, site: ArriveSite,
               guard: ir.Sym, self_guarded: bool, guard_lag: int
               ) -> tuple[Instance, list[z3.BoolRef]]:
    """The negated lemma for one Arrive site."""
    decl = model.barriers[site.barrier]
    gdecl = model.barriers[guard]
    awaits = [s for s in model.awaits if s.barrier == guard]
    if not awaits:  # LANG-5.10 (ERR-A27) rejects this before any obligation is built
        raise InternalError(f"no Await on {guard.name}, the guard of {site.barrier.name}",
                            site.loc)
    q = enc.instance(site.ctx, "r")
    elem = tuple(enc.value(e, q.iters) for e in site.home)
    number = counts.arrives_before(decl, elem, q)
    g_elem = _awaited_element(enc, awaits[0], q)
    waited = counts.awaits_before(gdecl, g_elem, q)
    off = -1 if self_guarded else 0
    same = [a == b for a, b in zip(elem, g_elem)]
    if len(elem) != len(g_elem):
        same = [z3.BoolVal(False, enc.zctx)]
    broken = z3.Or(waited < number + 1 + off, z3.Not(z3.And(*same)) if same else False)
    uncovered = _uncovered_homes(ring_info(model.proc.body), model, site.barrier)
    if uncovered:  # multicast beyond what the guard chain reaches (SEM-6.8 for every b named)
        broken = z3.Or(broken, *[z3.And(*[v == h for v, h in zip(elem, home)])
                                 for home in uncovered])
    if site.on_behalf:  # BW-5.5: no po edge from the guard's Awaits (LANG-5.12 waived)
        broken = z3.BoolVal(True, enc.zctx)
    q.names.update({f"elem{k}": v for k, v in enumerate(elem)})
    return q, [q.valid, number >= guard_lag - off, broken]


def _reached(info: RingInfo, model: ProgramModel, z: ir.Sym, home: tuple[int, ...]
             ) -> set[tuple[int, ...]]:
    """The elements of z whose awaits the completion order puts before an Arrive on z with
    `home`, with the lag arithmetic of the home (see the module docstring)."""
    guard = info.guarded_by.get(z)
    if guard is None or guard == z:
        return {home}
    reached, b = {home}, guard
    for _ in range(len(info.guarded_by) + 1):
        shape = model.barriers[b].shape
        reached = {h for s in reached for h in info.group(b, s, shape)}
        after = info.guarded_by.get(b)
        if after == z or after is None:
            return reached
        b = after
    return {home}


def _uncovered_homes(info: RingInfo, model: ProgramModel, z: ir.Sym) -> list[tuple[int, ...]]:
    """The homes of z whose Arrive names an element the guard chain does not reach."""
    shape = model.barriers[z].shape
    out = []
    for home in itertools.product(*(range(n) for n in shape)):
        named = set(info.group(z, home, shape))  # named(h) = G(h): the relation is symmetric
        if not named <= _reached(info, model, z, home):
            out.append(home)
    return out


def _awaited_element(enc: Encoder, site: AwaitSite, q: Instance) -> tuple[z3.ArithRef, ...]:
    """The element of the guard that the threads of q await on (barrier indices are thread-loop
    iterators, COLL-5.9): the Await site's element at the iterators containing q's thread."""
    if not site.element:
        return ()
    assert q.thread is not None
    iters = {**q.iters, **enc.thread_iter_terms(site.ctx, q.thread)}
    return tuple(enc.value(e, iters) for e in site.element)


def ring_sites(model: ProgramModel) -> list[tuple[ArriveSite, ir.Sym, bool, int]]:
    """(Arrive site on an mbarrier, its guard, self-guarded?, the guard's lag) per site."""
    info = ring_info(model.proc.body)
    out = []
    for site in model.arrives:
        guard = info.guarded_by.get(site.barrier)
        if guard is not None:
            out.append((site, guard, guard == site.barrier, info.lag.get(guard, 0)))
    return out
