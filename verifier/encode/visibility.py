"""Visibility of an earlier access at a later one, as a Z3 formula (SEM-4.5, 4.6, 5.1-5.4, 1.6).

Vis(a, b) holds if b is granted the required flag by a's record: by program order (SEM-4.6),
by a chain of fences (witness → augment, chained through overlapping threads and full sets,
SEM-5.4), or across a kernel boundary (SEM-1.6). Chains are paths of the static sync graph
(networkx); each fence instance on a chain is a *witness instance* built from the endpoints
(the fence's iterators pinned to a's or b's, inner sequential loops at their first or last
iteration, thread-loop iterators from the guards of the endpoint's thread). This
under-approximates synchronization (a proof needs one witness chain), so `proved` stays sound;
a counterexample that the machine does not reproduce is reported as unknown, never refuted.
"""

from __future__ import annotations

import itertools

import z3

from verifier.lang.ir import ir
from verifier.semantics import rules
from verifier.semantics.rules import Flag
from verifier.check.sites import AccessSite, ArriveSite, AwaitSite, Context, Loop, ProgramModel
from verifier.encode.barrier_counts import BarrierCounts
from verifier.encode.barrier_elements import arrive_pairs, trailing_pairs
from verifier.encode.chains import (
    Chain, Event, EventIndex, candidate_chains, grants, sync_events,
)
from verifier.encode.instances import Encoder, Instance, before, equal_on
from verifier.encode.terms import address, conj, disj, is_false

# Refinement levels: (longest chain, quantified witnesses); each is tried only when the
# previous one leaves a candidate.
LEVELS = ((1, False), (2, True), (3, True))
# the anchored variant of a quantified level, asked before it (Choice E5)
ANCHORED_FALLBACK = {1: (2, False), 2: (3, False)}


def _single(lp: Loop) -> int | None:
    """The only value of a loop `for y in cuda_threads(c, c + 1, ...)`, else None."""
    lo, hi = lp.lo, lp.hi
    if isinstance(lo, ir.Const) and isinstance(hi, ir.Const) and hi.value - lo.value == 1:
        return int(lo.value)
    return None


class VisibilityBuilder:
    def __init__(self, enc: Encoder, model: ProgramModel, max_chain: int = 1) -> None:
        self.max_chain = max_chain
        self.quantified = False  # witness instances with bound sequential iterators
        self.bound: list[z3.ArithRef] = []
        self.fresh = itertools.count()
        self._witness_cache: dict[tuple[object, ...], tuple[list[Instance], list]] = {}
        self._pair_cache: dict[tuple[int, int], z3.BoolRef] = {}
        self._before_cache: dict[tuple[int, int], z3.BoolRef] = {}
        self._link_cache: dict[tuple[object, ...], z3.BoolRef] = {}
        self._event_cache: dict[tuple[object, ...], list] = {}  # type: ignore[type-arg]
        self._keep: list[object] = []
        self.enc = enc
        self.zctx = enc.zctx
        self.model = model
        self.events = sync_events(model)
        self.barriers = BarrierCounts(enc, model)
        self.index = EventIndex(self.events)

    def true(self) -> z3.BoolRef:
        return z3.BoolVal(True, self.zctx)

    def false(self) -> z3.BoolRef:
        return z3.BoolVal(False, self.zctx)

    # ------------------------------------------------------------ relations between instances

    def same_kernel(self, a: Instance, b: Instance) -> z3.BoolRef:
        da, db = a.ctx.device, b.ctx.device
        if da is None or db is None or da is not db:
            return self.false()
        return equal_on(a, b, da.outer_loops, self.zctx)

    def same_task(self, a: Instance, b: Instance) -> z3.BoolRef:
        da = a.ctx.device
        if da is None or da is not b.ctx.device:
            return self.false()
        return conj((equal_on(a, b, da.outer_loops, self.zctx),
                     equal_on(a, b, da.task_loops, self.zctx)), self.zctx)

    def holds_thread(self, site: AccessSite, inst: Instance, n: z3.ArithRef) -> z3.BoolRef:
        """n ∈ T_a: the threads a's record grants program order to (SEM-4.4, 4.6)."""
        assert inst.thread is not None
        if site.convergent and not site.single_thread:
            return self.enc.member(inst.ctx, n, inst.iters)
        return inst.thread == n

    # ------------------------------------------------------------ the three ways to see a

    def program_order(self, sa: AccessSite, a: Instance, sb: AccessSite, b: Instance,
                      flag: Flag) -> z3.BoolRef:
        """SEM-4.6: same thread, q0(a) ∈ X(b), a in order."""
        if sa.out_of_order or sa.qual.q0 not in sb.qual.extended:
            return self.false()
        if a.thread is None:  # CPU scope: 𝔾 × {q0}
            return self.true() if b.thread is None else self.false()
        if b.thread is None:
            return self.false()
        return conj((self.same_task(a, b), self.holds_thread(sa, a, b.thread)), self.zctx)

    def boundary(self, sa: AccessSite, a: Instance, sb: AccessSite, b: Instance,
                 flag: Flag) -> z3.BoolRef:
        """SEM-1.6: a kernel boundary between a and b is a full barrier for device qual-tls."""
        first = rules.KERNEL_START_FIRST
        stream = rules.KERNEL_SYNC
        witnessed = sa.qual.q0 in first.full
        granted = grants(stream, sb.qual.extended, flag)
        spread = sa.qual.q0 in sb.qual.extended and (not sa.out_of_order or flag is Flag.issue)
        ok = (witnessed and granted) or spread
        if not ok:
            return self.false()
        return z3.Not(self.same_kernel(a, b))

    def fence_chains(self, sa: AccessSite, a: Instance, sb: AccessSite, b: Instance,
                     flag: Flag) -> list[z3.BoolRef]:
        if a.thread is None or b.thread is None:
            return []
        out = []
        decl = self.model.barriers.get(sa.buf)
        ring = decl is not None and decl.ring is not None or sa.buf in self.model.ordering
        # DIAL-6, DIAL-18: temporal grants carry ring storage and data rings' handoffs
        for chain in candidate_chains(self.index, sa, sb, flag, self.max_chain, temporal=ring):
            out.extend(self.chain_terms(chain, sa, a, b))
        return out

    def chain_terms(self, chain: Chain, sa: AccessSite, a: Instance, b: Instance
                    ) -> list[z3.BoolRef]:
        """One term per choice of witness instances; each holds iff that chain carries a to b.
        In quantified mode the events' sequential iterators are existentially bound, which is
        the exact condition for the chain's shape (the negation becomes a ∀ for Z3)."""
        assert a.thread is not None and b.thread is not None
        self.bound = []
        options = [self.event_instances(e, a, b) for e in chain.events]
        bound = list(self.bound)
        # a link may pass through a third thread (producer -> consumers -> producer): in
        # quantified mode it is an existential variable of its own (SEM-5.4 chaining)
        middle = [z3.Int(f"h{k}@chain{next(self.fresh)}", self.zctx)
                  for k in range(len(chain.events) - 1)] if self.quantified else []
        bound += middle
        terms = []
        same_task = self.same_task(a, b)
        for choice in itertools.product(*options):
            parts = [same_task]
            for first, last, extra in choice:
                parts.extend(extra)
            steps = [(first, last) for first, last, _ in choice]
            parts.append(self.before(a, steps[0][0]))
            if chain.events[0].tag_site is None:  # a tag of a's own needs no witness
                parts.append(self.enc.member(steps[0][0].ctx, a.thread, steps[0][0].iters))
            for k, ((_, last1), (first2, _)) in enumerate(zip(steps, steps[1:])):
                parts.append(self.before(last1, first2))
                parts.append(self.link(last1, first2, [a.thread, b.thread] + middle[k:k + 1]))
            last = steps[-1][1]
            parts.append(self.before(last, b))
            parts.append(self.enc.member(last.ctx, b.thread, last.iters))
            term = conj(parts, self.zctx)
            if is_false(term):
                continue  # this choice of witnesses can never carry a to b
            terms.append(term)
        if bound and terms:
            return [z3.Exists(bound, disj(terms, self.zctx))]
        return terms

    def link(self, x: Instance, y: Instance, threads: list[z3.ArithRef]) -> z3.BoolRef:
        """Some thread runs both x and y (SEM-5.4 chaining): one of `threads` or a
        representative (E4); once per pair of instances and threads (witnesses recur across
        the choices of a chain and across chains)."""
        key = (id(x), id(y), tuple(address(t) for t in threads))
        hit = self._link_cache.get(key)
        if hit is None:
            via = threads + self.representatives(x, y)
            hit = self._link_cache[key] = disj(
                [conj((self.enc.member(x.ctx, h, x.iters), self.enc.member(y.ctx, h, y.iters)),
                      self.zctx) for h in via], self.zctx)
            self._keep.append((x, y, threads))
        return hit

    def representatives(self, x: Instance, y: Instance) -> list[z3.ArithRef]:
        """Anchored link threads besides n_a and n_b (choice E4): a thread of x's instance and
        one of y's (`Encoder.representative`), e.g. a consumer thread that links its Await to
        a cluster-wide Fence while a and b run on a producer. Only in anchored mode: the
        quantified middle thread already ranges over them."""
        if self.quantified:
            return []
        out = []
        for inst in (x, y):
            rep = self.enc.representative(inst.ctx, inst.iters)
            if rep is not None and not any(rep.eq(t) for t in out):
                out.append(rep)
        return out

    def before(self, x: Instance, y: Instance) -> z3.BoolRef:
        """`instances.before`, once per pair of instances (witnesses recur across chains)."""
        key = (id(x), id(y))
        hit = self._before_cache.get(key)
        if hit is None:
            hit = self._before_cache[key] = before(x, y, self.zctx)
            self._keep.append((x, y))
        return hit

    def event_instances(self, event: Event, a: Instance, b: Instance
                        ) -> list[tuple[Instance, Instance, list[z3.BoolRef]]]:
        """(first instance, last instance, conditions) per witness choice of an event, once per
        (event, a, b) and mode: chains share events. The quantified witnesses' variables are
        kept with them and bound again for each chain that uses them (`self.bound`); a and b
        are the obligation's own instances, so nothing is shared between obligations."""
        if self.quantified:
            key = (event.key, id(a), id(b), True)
            hit = self._event_cache.get(key)
            if hit is None:
                outer, self.bound = self.bound, []
                try:
                    options = self._event_instances(event, a, b)
                finally:
                    added, self.bound = self.bound, outer
                hit = self._event_cache[key] = (options, added)
                self._keep.append((a, b))
            self._bind(hit[1])
            return hit[0]
        key = (event.key, id(a), id(b))
        hit = self._event_cache.get(key)
        if hit is None:
            hit = self._event_cache[key] = self._event_instances(event, a, b)
            self._keep.append((a, b))
        return hit

    def _event_instances(self, event: Event, a: Instance, b: Instance
                         ) -> list[tuple[Instance, Instance, list[z3.BoolRef]]]:
        if event.fence is not None:
            return [(e, e, [e.valid]) for e in self.witnesses(event.fence.ctx, a, b)]
        assert event.await_ is not None
        # DIAL-6: on an endgame ring the element, not a's or b's thread, decides which threads
        # run the Arrive/Await; quantified witnesses leave their thread iterators free too
        ring = self.model.barriers[event.await_.barrier].ring is not None
        if event.tag_site is not None:
            return [(aw, aw, [aw.valid, trailing_pairs(self.enc, self.barriers, self.model,
                                                       event.tag_site, a, event.await_, aw)])
                    for aw in self.witnesses(event.await_.ctx, a, b, ring)]
        assert event.arrive is not None
        out = []
        for arr in self.witnesses(event.arrive.ctx, a, b, ring):
            for aw in self.witnesses(event.await_.ctx, a, b, ring):
                conds = [arr.valid, aw.valid, self.before(arr, aw),
                         self.pairs(event.arrive, arr, event.await_, aw)]
                out.append((arr, aw, conds))
        return out

    def pairs(self, arr_site: ArriveSite, arr: Instance, aw_site: AwaitSite, aw: Instance
              ) -> z3.BoolRef:
        """The Await retires the Arrive's tag: same element of the same barrier instance and
        arrive number ≤ a_max (SEM-6.3, 6.4)."""
        key = (id(arr), id(aw))
        if key not in self._pair_cache:
            self._pair_cache[key] = self._pairs(arr_site, arr, aw_site, aw)
            self._keep.append((arr, aw))
        return self._pair_cache[key]

    def _pairs(self, arr_site: ArriveSite, arr: Instance, aw_site: AwaitSite, aw: Instance
               ) -> z3.BoolRef:
        return arrive_pairs(self.enc, self.barriers, self.model, arr_site, arr, aw_site, aw)

    def witnesses(self, site_ctx: Context, a: Instance, b: Instance,
                  free_threads: bool = False) -> list[Instance]:
        """Witness instances of a sync site anchored at a's or b's thread and iterators (with
        `free_threads`, quantified ones bind the thread iterators a and b do not share)."""
        free_threads = free_threads and self.quantified
        key = (id(site_ctx), id(a), id(b), self.quantified, free_threads)
        hit = self._witness_cache.get(key)
        if hit is None:
            start = len(self.bound)
            insts = self._witnesses(site_ctx, a, b, free_threads)
            hit = (insts, list(self.bound[start:]))
            del self.bound[start:]
            self._witness_cache[key] = hit
            self._keep.append((site_ctx, a, b))
        self._bind(hit[1])
        return hit[0]

    def _bind(self, variables: list[z3.ArithRef]) -> None:
        """Add the witnesses' bound variables not bound yet, in order (one node per term:
        compared by address, not `eq`, which made this quadratic in Python calls)."""
        if variables:
            have = {address(w) for w in self.bound}
            for v in variables:
                if address(v) not in have:
                    have.add(address(v))
                    self.bound.append(v)

    def _witnesses(self, site_ctx: Context, a: Instance, b: Instance,
                   free_threads: bool = False) -> list[Instance]:
        out: list[Instance] = []
        for anchor in (a, b):
            assert anchor.thread is not None
            pinned: dict[ir.Sym, z3.ArithRef] = {}
            anchor_loops = {lp.sym for lp in anchor.ctx.loops}
            thread_terms = self.enc.thread_iter_terms(site_ctx, anchor.thread)
            free_seq = []
            for lp in site_ctx.loops:
                # quantified: a thread loop the anchor does not share is bound too, e.g. the
                # consumer warpgroup of a producer -> consumer -> producer chain, whose
                # iterator the producer's thread does not determine (the chain's memberships
                # and links fix it)
                if self.quantified and (lp.kind == "seq" or lp.kind == "threads" and
                                        lp.sym not in anchor_loops):
                    var = z3.Int(f"{lp.sym.name}#{lp.sym.id}@w{next(self.fresh)}", self.zctx)
                    self.bound.append(var)
                    pinned[lp.sym] = var
                elif lp.sym in anchor_loops:
                    pinned[lp.sym] = anchor.iters[lp.sym]
                elif lp.kind == "threads" and _single(lp) is not None:
                    # one iteration: its value, whichever thread anchors (a consumer's
                    # one-thread loop seen from a producer's thread)
                    pinned[lp.sym] = z3.IntVal(_single(lp), self.zctx)
                elif lp.kind == "threads":
                    pinned[lp.sym] = thread_terms[lp.sym]
                else:
                    free_seq.append(lp)
            for ends in itertools.product((0, 1), repeat=len(free_seq)):
                iters = dict(pinned)
                env: dict[ir.Sym, z3.ArithRef] = {}
                for lp in site_ctx.loops:
                    if lp.sym in iters:
                        env[lp.sym] = iters[lp.sym]
                        continue
                    end = ends[free_seq.index(lp)]
                    term = self.enc.value(lp.lo, env) if end == 0 else \
                        self.enc.value(lp.hi, env) - 1
                    iters[lp.sym] = term
                    env[lp.sym] = term
                # loop ranges and conditions only: which thread runs the witness is stated by
                # chain_terms (a's thread, b's thread, or a middle thread of a link)
                inst = Instance(site_ctx, iters, None, self.true())
                inst.valid = self.enc.validity(inst)
                inst.thread = anchor.thread
                out.append(inst)
        return out

    # ------------------------------------------------------------ the whole condition

    def visible(self, sa: AccessSite, a: Instance, sb: AccessSite, b: Instance,
                flag: Flag) -> z3.BoolRef:
        if sa.atomic_quals and flag is Flag.atom and sa.atomic_quals & sb.qual.extended:
            return self.true()
        parts = [self.program_order(sa, a, sb, b, flag), self.boundary(sa, a, sb, b, flag)]
        parts.extend(self.fence_chains(sa, a, sb, b, flag))
        return disj(parts, self.zctx)

    def visible_to_some(self, sa: AccessSite, a: Instance, sb: AccessSite, b: Instance,
                        flag: Flag) -> z3.BoolRef:
        """Some thread of b's instance sees a (b a convergent collective, SEM-4.5): DIAL-20's
        free of a persistent ring, whose earlier accesses need only be complete. The thread
        is bound here, so the negated obligation asks for an a that no thread of b sees."""
        assert b.thread is not None
        some = z3.Int(f"thread@some{next(self.fresh)}", self.zctx)
        other = Instance(b.ctx, b.iters, some, b.valid, b.element)
        seen = self.visible(sa, a, sb, other, flag)
        member = self.enc.member(b.ctx, some, b.iters)
        return z3.Exists([some], conj((member, seen), self.zctx))
