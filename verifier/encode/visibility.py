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
from dataclasses import dataclass

import networkx as nx
import z3

from verifier.lang import ir
from verifier.semantics import rules
from verifier.semantics.rules import Flag
from verifier.semantics.sites import AccessSite, FenceSite, ProgramModel
from verifier.encode.instances import Encoder, Instance, before, equal_on

MAX_CHAIN = 3  # longest fence chain tried when shorter ones leave a spurious candidate


def sync_graph(model: ProgramModel) -> nx.DiGraph:
    """Static sync graph over fence sites: F → G when τ2(F).F meets τ1(G).F (SEM-5.4)."""
    g = nx.DiGraph()
    for f in model.fences:
        g.add_node(f.id, site=f)
    for f, h in itertools.product(model.fences, repeat=2):
        if f.ctx.device is not h.ctx.device:
            continue
        if rules.SYNC_SETS[f.second].full & rules.SYNC_SETS[h.first].full:
            g.add_edge(f.id, h.id)
    return g


def grants(second: rules.SyncSets, quals: frozenset, flag: Flag) -> bool:
    """A full augment with τ2 grants `flag` on some qual-tl of X (SEM-5.2)."""
    if flag is Flag.temp:
        return bool(second.temporal & quals)
    return bool(second.full & quals)


@dataclass(frozen=True)
class Chain:
    fences: tuple[FenceSite, ...]


def candidate_chains(model: ProgramModel, graph: nx.DiGraph, a: AccessSite, b: AccessSite,
                     flag: Flag, max_chain: int = MAX_CHAIN) -> list[Chain]:
    if a.ctx.device is None or a.ctx.device is not b.ctx.device:
        return []
    by_id = {f.id: f for f in model.fences if f.ctx.device is a.ctx.device}
    starts = [f for f in by_id.values() if a.qual.q0 in rules.SYNC_SETS[f.first].full]
    ends = {f.id for f in by_id.values()
            if grants(rules.SYNC_SETS[f.second], b.qual.extended, flag)}
    chains: list[Chain] = []
    for s in starts:
        if s.id in ends:
            chains.append(Chain((s,)))
        if max_chain < 2:
            continue
        for path in nx.all_simple_paths(graph, s.id, list(ends - {s.id}), cutoff=max_chain - 1):
            chains.append(Chain(tuple(by_id[i] for i in path)))
    return chains


class VisibilityBuilder:
    def __init__(self, enc: Encoder, model: ProgramModel, max_chain: int = 1) -> None:
        self.max_chain = max_chain
        self.enc = enc
        self.zctx = enc.zctx
        self.model = model
        self.graph = sync_graph(model)

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
        return z3.And(equal_on(a, b, da.outer_loops, self.zctx),
                      equal_on(a, b, da.task_loops, self.zctx))

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
        return z3.And(self.same_task(a, b), self.holds_thread(sa, a, b.thread))

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
        for chain in candidate_chains(self.model, self.graph, sa, sb, flag, self.max_chain):
            out.extend(self.chain_terms(chain, sa, a, b))
        return out

    def chain_terms(self, chain: Chain, sa: AccessSite, a: Instance, b: Instance
                    ) -> list[z3.BoolRef]:
        assert a.thread is not None and b.thread is not None
        options = [self.witnesses(f, a, b) for f in chain.fences]
        terms = []
        for choice in itertools.product(*options):
            conj = [self.same_task(a, b)]
            insts = list(choice)
            conj.extend(e.valid for e in insts)
            conj.append(before(a, insts[0], self.zctx))
            conj.append(self.enc.member(insts[0].ctx, a.thread, insts[0].iters)
                        if not (sa.convergent and not sa.single_thread)
                        else self.enc.member(insts[0].ctx, a.thread, insts[0].iters))
            for e1, e2 in zip(insts, insts[1:]):
                conj.append(before(e1, e2, self.zctx))
                conj.append(z3.Or(*[z3.And(self.enc.member(e1.ctx, h, e1.iters),
                                           self.enc.member(e2.ctx, h, e2.iters))
                                    for h in (a.thread, b.thread)]))
            conj.append(before(insts[-1], b, self.zctx))
            conj.append(self.enc.member(insts[-1].ctx, b.thread, insts[-1].iters))
            terms.append(z3.And(*conj))
        return terms

    def witnesses(self, f: FenceSite, a: Instance, b: Instance) -> list[Instance]:
        """Witness instances of fence f anchored at a's or b's thread and iterators."""
        out: list[Instance] = []
        for anchor in (a, b):
            assert anchor.thread is not None
            pinned: dict[ir.Sym, z3.ArithRef] = {}
            anchor_loops = {lp.sym for lp in anchor.ctx.loops}
            thread_terms = self.enc.thread_iter_terms(f.ctx, anchor.thread)
            free_seq = []
            for lp in f.ctx.loops:
                if lp.sym in anchor_loops:
                    pinned[lp.sym] = anchor.iters[lp.sym]
                elif lp.kind == "threads":
                    pinned[lp.sym] = thread_terms[lp.sym]
                else:
                    free_seq.append(lp)
            for ends in itertools.product((0, 1), repeat=len(free_seq)):
                iters = dict(pinned)
                env: dict[ir.Sym, z3.ArithRef] = {}
                for lp in f.ctx.loops:
                    if lp.sym in iters:
                        env[lp.sym] = iters[lp.sym]
                        continue
                    end = ends[free_seq.index(lp)]
                    term = self.enc.value(lp.lo, env) if end == 0 else \
                        self.enc.value(lp.hi, env) - 1
                    iters[lp.sym] = term
                    env[lp.sym] = term
                inst = Instance(f.ctx, iters, anchor.thread, self.true())
                inst.valid = self.enc.validity(inst)
                out.append(inst)
        return out

    # ------------------------------------------------------------ the whole condition

    def visible(self, sa: AccessSite, a: Instance, sb: AccessSite, b: Instance,
                flag: Flag) -> z3.BoolRef:
        if sa.atomic_quals and flag is Flag.atom and sa.atomic_quals & sb.qual.extended:
            return self.true()
        parts = [self.program_order(sa, a, sb, b, flag), self.boundary(sa, a, sb, b, flag)]
        parts.extend(self.fence_chains(sa, a, sb, b, flag))
        return z3.Or(*parts)
