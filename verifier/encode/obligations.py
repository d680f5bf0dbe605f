"""Obligations: bounds (SEM-4.3) and hazard freedom of every access pair (SEM-4.5, 4.7).

Each obligation is the *negation* of what must hold, as a list of Z3 constraints: unsat means
the obligation is discharged for all sizes satisfying the asserts. Constraints are built on
demand (`Obligation.build`), so that pairs the pruning rules settle (pruning.py) cost nothing,
and each build depends on the obligation alone, never on what was built before it: the query
text, and so the answer, is the same in any order and any process (D2, specs/verification.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import z3

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.lang.ir.lifetimes import RELEASE_PREFIX
from verifier.lang.stdlib.dialects import ENDGAME
from verifier.lang.stdlib.timelines import QualTL
from verifier.semantics import rules
from verifier.semantics.rules import AccessKind, Flag
from verifier.check.sites import (
    AccessSite, ArriveSite, AwaitSite, BarrierDecl, ProgramModel, TmaSite,
)
from verifier.encode.barrier_counts import (element_vars, free_point, last_instance,
                                            short_of_partner)
from verifier.encode.instances import Encoder, Instance, before, equal_on
from verifier.encode.kills import KillSites, clipped_bounds, killed
from verifier.encode.pairs import kept_pairs
from verifier.encode.pruning import Pruner
from verifier.encode.terms import conj
from verifier.encode.ring_barriers import (lockstep_missed, one_shot_sites, ring_decls,
                                           ring_trailing_sites, second_arrive,
                                           trailing_after_arrive, unrecycled_slot)
from verifier.encode.ring_invariant import ring_lemma, ring_sites
from verifier.encode.transactions import byte_mismatch, checks, phase_disagreement
from verifier.encode.twins import merged_sites
from verifier.encode.visibility import ANCHORED_FALLBACK, LEVELS, VisibilityBuilder

LAST_USE_PREFIX = "last-use:"  # DIAL-17 free checks of endgame SMEM (they decide)


@dataclass(frozen=True)
class Built:
    """One query of an obligation: the negated claim, the terms a model reports, whether
    products were built for it (its linear abstraction is tried first) and the premises
    (nest_sums.Premise keys) its closed forms rely on."""

    constraints: list[z3.BoolRef]
    names: dict[str, z3.ArithRef]
    nonlinear: bool = False
    premises: frozenset[int] = frozenset()


@dataclass
class Obligation:
    id: str
    rule: str
    kind: str  # out-of-bounds | RAW | WAR | WAW | ...
    variable: str
    loc: SrcLoc
    related: list[tuple[SrcLoc, str]]
    # (refinement level, anchored variant of a quantified level) -> the query
    build: Callable[[int, bool], Built]
    levels: int = 1  # refinement levels (visibility.LEVELS for hazards)
    description: str = ""
    discharged_by: str = ""  # the pruning rule that settled it without a solver (PR-*)
    release: str = ""  # the early release (CG-R1) it belongs to; "" for the proc's own
    note: str = ""  # shown under `-v`: where this obligation's rule departs from upstream's
    # PR-8 (twins.py): the query over both twin reads of an `if`; its unsat proves this one
    shared: Obligation | None = None


# D3 (docs/reference/semantics.md §10): a free is a write-only mutate, so temporal visibility
# of an earlier write suffices (SEM-4.7); upstream's checker demands full visibility
D3_NOTE = ("D3: a free needs only temporal visibility of an earlier write (SEM-4.7); upstream's "
           "sync_check demands full visibility and reports a WAW hazard at this free when a "
           "temporal-only sync (e.g. Fence(cuda_in_order, cuda_temporal)) is all that orders "
           "the write before it")

# DIAL-12: the free of a ring with asynchronous arrives keeps SEM-4.7, which endgame skips
DIAL12_NOTE = ("DIAL-12, DIAL-20: stricter than endgame's sync_check, which checks no managed "
               "ring buffer at its free. An asynchronous arrive (cp.async.mbarrier.arrive.noinc, "
               "a TMA's complete-tx) lands on the mbarrier after its thread moved on, and PTX "
               "orders it before nothing the thread does next; only a wait on the phase it "
               "completes observes it. Landing after the slot's mbarrier.init for the next "
               "allocation instance (DIAL-13) it counts toward that instance's phase, which then "
               "completes early; PTX does not say the CTA's exit waits for it either. An Await "
               "of its phase by some thread before the end of the ring's scope orders it: the "
               "lowering's CTA (cluster) barrier before the next initialisation does the rest")


def required_flag(earlier: AccessSite, later: AccessSite) -> Flag | None:
    """The flag `later` needs on `earlier`'s record, or None when they cannot conflict."""
    if earlier.kind is AccessKind.read:
        return None if later.kind is AccessKind.read else Flag.temp
    if earlier.qual.q0 is QualTL.slot:
        return Flag.temp  # DIAL-6: a ring slot's handoff is seen once temporally ordered
    if later.kind is AccessKind.read:
        return Flag.full
    if later.kind is AccessKind.atomic and earlier.atomic_quals & later.qual.extended:
        return None
    return rules.mutate_flag(later.kind)


def _hazard_kind(earlier: AccessSite, later: AccessSite) -> str:
    return rules.hazard_kind(later.kind, earlier.kind is AccessKind.read).value


class ObligationBuilder:
    def __init__(self, model: ProgramModel, zctx: z3.Context,
                 fixed_sizes: dict[str, int] | None = None) -> None:
        self.model = model
        self.zctx = zctx
        proc = model.proc
        controls = {a.name: a.typ for a in proc.args if isinstance(a.typ, ir.Control)}
        self.enc = Encoder(controls, proc.preds, zctx)
        self.base = list(self.enc.assumptions)
        if fixed_sizes:
            for sym, var in self.enc.sizes.items():
                if sym.name in fixed_sizes:
                    self.base.append(var == fixed_sizes[sym.name])
        self.vis = VisibilityBuilder(self.enc, model)
        self.pruner = Pruner(model)
        self.kill_sites = KillSites(model.accesses)
        self.size_names = {sym.name: var for sym, var in self.enc.sizes.items()}
        self.issued: dict[str, int] = {}  # obligation ids given so far (`unique`)
        self.merged = merged_sites(model)  # PR-8 twins (kept alive: caches key on ids)

    # ------------------------------------------------------------ bounds

    def _measured(self, make: Callable[[], tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]],
                  products_before: int | None = None) -> Built:
        """Run `make` noting the products and premises it builds (from `products_before`
        when an earlier build of the same obligation made shared parts)."""
        start = self.enc.products if products_before is None else products_before
        self.enc.touched = set()
        constraints, names = make()
        return Built(constraints, names, self.enc.products > start,
                     frozenset(self.enc.touched))

    def bounds(self, prune: bool = True) -> list[Obligation]:
        """One obligation per indexed access; those PR-5 settles are listed, never built."""
        out = []
        for site in self.model.accesses:
            if site.is_free or min(len(site.element.points), len(site.shape)) == 0:
                continue  # nothing indexed: no bound to check
            if site.element.clip_to_shape:
                continue  # a tensor-map window: the hardware clips it (SEM-4.3)
            out.append(ob := Obligation(
                f"bounds:{site.buf.name}@{site.loc.line}:{site.loc.col}", "SEM-4.3",
                "out-of-bounds", site.buf.name, site.loc, [],
                lambda level, fallback, site=site: self._measured(lambda: self._bounds(site)),
                description=f"{site.kind.value} of {site.buf.name} stays in bounds"))
            if prune and self.pruner.in_bounds(site):
                ob.discharged_by = "PR-5"
        return out

    def _bounds(self, site: AccessSite) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
        inst = self.enc.instance(site.ctx, "a")
        shape = [self.enc.value(d, {}) for d in site.shape]
        bad, nonempty = clipped_bounds(self.enc, site, inst, shape)
        if nonempty:  # a bounds-predicated store touches only its restricted window
            bad = [z3.And(*nonempty, z3.Or(*bad))]
        return self.base + [inst.valid, z3.Or(*bad)], {**self.size_names, **inst.names}

    # ------------------------------------------------------------ hazards

    def hazards(self, prune: bool = True) -> list[Obligation]:
        """One obligation per ordered pair of accesses to one variable that can conflict
        (PR-1), but for pairs with a write to the same element always between them (PR-4,
        pairs.py); pairs PR-2, PR-3 or PR-7 settle are listed with `discharged_by` and never
        built.
        `prune=False` lists every pair and builds each (tests compare the two)."""
        tracked = [s for s in self.model.accesses if s.tracked]
        by_var: dict[ir.Sym, list[AccessSite]] = {}
        for site in tracked:
            by_var.setdefault(site.buf, []).append(site)
        if prune:
            order = {site.id: k for k, site in enumerate(tracked)}
            pairs = sorted((p for sites in by_var.values() for p in kept_pairs(sites)),
                           key=lambda p: (order[p[1].id], order[p[0].id]))
        else:
            pairs = [(earlier, later) for later in tracked for earlier in by_var[later.buf]
                     if not earlier.is_free]
        out = []
        groups: dict[tuple[int, int, Flag], list[Obligation]] = {}
        for earlier, later in pairs:
            flag = required_flag(earlier, later)
            if flag is None:
                continue
            ob = self.hazard(earlier, later, flag)
            if prune:
                ob.discharged_by = self.pruner.settled_by(earlier, later, flag)
                if not ob.discharged_by and (earlier.id in self.merged or
                                             later.id in self.merged):
                    key = (id(self.merged.get(earlier.id, earlier)),
                           id(self.merged.get(later.id, later)), flag)
                    groups.setdefault(key, []).append(ob)
            out.append(ob)
        self._share(groups)
        return out

    def _share(self, groups: dict[tuple[int, int, Flag], list[Obligation]]) -> None:
        """PR-8: the pairs of twin reads with one partner get the merged pair's query."""
        sites = {id(s): s for s in [*self.model.accesses, *self.merged.values()]}
        for (earlier, later, flag), members in groups.items():
            if len(members) < 2:
                continue
            shared = self.hazard(sites[earlier], sites[later], flag)
            shared.id = "PR-8:" + "+".join(ob.id for ob in members)
            for ob in members:
                ob.shared = shared

    def hazard(self, sa: AccessSite, sb: AccessSite, flag: Flag) -> Obligation:
        state: dict[str, object] = {}

        def build(level: int, fallback: bool) -> Built:
            if not state:  # the parts every level shares, built once
                state["products"] = self.enc.products
                state["fresh"] = itertools.count()
                state["common"] = self._hazard_common(sa, sb, state)
            common, a, b = state["common"]  # type: ignore[misc]

            def make() -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
                self.vis.max_chain, self.vis.quantified = \
                    ANCHORED_FALLBACK[level] if fallback else LEVELS[level]
                self.vis.fresh = state["fresh"]  # names local to this obligation
                seen = self.vis.visible_to_some if sb.is_free and sb.convergent else \
                    self.vis.visible  # DIAL-20: a persistent ring's free, convergent
                return common + [z3.Not(seen(sa, a, sb, b, flag))], \
                    state["names"]  # type: ignore[return-value]

            return self._measured(make, state["products"])  # type: ignore[arg-type]

        kind = _hazard_kind(sa, sb)
        what = f"free({sb.buf.name})" if sb.is_free else sb.buf.name
        note = D3_NOTE if sb.is_free and not sb.convergent and flag is Flag.temp and \
            sa.kind is not AccessKind.read and self._temporal_only(sa.qual.q0) else ""
        decl = self.model.barriers.get(sb.buf)
        if sb.is_free and decl is not None and decl.ring is not None:
            note = DIAL12_NOTE  # only rings with an asynchronous arrive keep a free check
        rule = "SEM-4.5" if not sb.is_free else "DIAL-20" if sb.convergent else "SEM-4.7"
        return Obligation(
            f"{kind}:{sb.buf.name}@{sa.loc.line}:{sa.loc.col}->{sb.loc.line}:{sb.loc.col}",
            rule, kind, sb.buf.name, sb.loc,
            [(sa.loc, "earlier access"), (sb.loc, "later access")], build, len(LEVELS),
            f"{sb.kind.value} of {what} sees {sa.kind.value} ({flag.value})", note=note)

    def _temporal_only(self, q0: object) -> bool:
        """Some Fence or Await of the proc grants only temporal visibility on q0 (its second
        sync-tl's temporal set holds q0, its full set does not): a free of a write may then
        be ordered after it temporally only, where D3 departs from upstream."""
        seconds = [f.second for f in self.model.fences] + [a.second for a in self.model.awaits]
        return any(q0 in rules.SYNC_SETS[tl].temporal and q0 not in rules.SYNC_SETS[tl].full
                   for tl in seconds)

    def _hazard_common(self, sa: AccessSite, sb: AccessSite, state: dict[str, object]
                       ) -> tuple[list[z3.BoolRef], object, object]:
        a = self.enc.instance(sa.ctx, "a")
        b = self.enc.instance(sb.ctx, "b")
        if sb.is_free and b.thread is None:
            raise AssertionError("free at CPU scope")
        ea, ca = self.enc.element_terms(sa, a, "a")
        eb, cb = self.enc.element_terms(sb, b, "b")
        same_elem = conj([x == y for x, y in zip(ea, eb)], self.zctx)
        same_alloc = equal_on(a, b, sa.alloc_loops, self.zctx)
        names = {**self.size_names, **a.names, **b.names}
        for k, term in enumerate(ea):
            names[f"index{k}"] = term
        state["names"] = names
        return self.base + [a.valid, b.valid, ca, cb, same_elem, same_alloc,
                            before(a, b, self.zctx), z3.Not(self.killed(sa, a, sb, b, ea))], a, b

    def killed(self, sa: AccessSite, a: Instance, sb: AccessSite, b: Instance,
               elem: tuple[z3.ArithRef, ...]) -> z3.BoolRef:
        """A mutate between a and b drops a's record (encode/kills.py), anchored witnesses."""
        mode = self.vis.quantified
        self.vis.quantified = False
        try:
            return killed(self.enc, self.kill_sites.around(sa, sb), self.vis.witnesses, sa, a,
                          sb, b, elem)
        finally:
            self.vis.quantified = mode

    def barriers(self) -> list[Obligation]:
        """SEM-6.7 satisfiable awaits and SEM-6.6 balanced counts at every barrier free."""
        out = []
        for site in self.model.awaits:
            ring = self.model.barriers[site.barrier].ring is not None
            if site.n >= 0 and not ring:
                continue  # arrive-indexed awaits never wait for a future arrive (SEM-6.7)
            out.append(Obligation(
                f"await:{site.barrier.name}@{site.loc.line}:{site.loc.col}",
                "DIAL-11" if ring else "SEM-6.7",
                "deadlock", site.barrier.name, site.loc, [(site.loc, "later access")],
                lambda level, fallback, site=site: self._measured(lambda: self._await(site)),
                description=f"Await on {site.barrier.name} finds its paired Arrive before it"))
        for arrive in one_shot_sites(self.model):
            out.append(Obligation(
                f"one-shot:{arrive.barrier.name}@{arrive.loc.line}:{arrive.loc.col}", "DIAL-10",
                "barrier-count", arrive.barrier.name, arrive.loc, [(arrive.loc, "later access")],
                lambda level, fallback, arrive=arrive: self._measured(lambda: self._one_shot(
                    arrive)),
                description=f"each Arrive on {arrive.barrier.name} completes a ring element "
                "no other Arrive completes"))
        for tma in ring_trailing_sites(self.model):
            out.append(Obligation(
                f"trailing:{tma.trailing.barrier.name}@{tma.loc.line}:{tma.loc.col}", "DIAL-10",
                "barrier-count", tma.trailing.barrier.name, tma.loc, [(tma.loc, "later access")],
                lambda level, fallback, tma=tma: self._measured(lambda: self._trailing(tma)),
                description=f"the trailing barrier {tma.trailing.barrier.name} of this instr "
                "names no element already arrived on"))
        for decl in ring_decls(self.model):
            out.append(Obligation(
                f"recycled:{decl.sym.name}@{decl.loc.line}:{decl.loc.col}", "DIAL-16",
                "barrier-count", decl.sym.name, decl.loc, [(decl.loc, "later access")],
                lambda level, fallback, decl=decl: self._measured(lambda: self._recycled(decl)),
                description=f"every slot of {decl.sym.name} is recycled by an Arrive before "
                "its free"))
        for decl in self.model.barriers.values():
            if self.model.proc.dialect == ENDGAME:
                continue  # endgame: no count balance at the free (DIAL-12)
            out.append(Obligation(
                f"balance:{decl.sym.name}@{decl.loc.line}:{decl.loc.col}", "SEM-6.6",
                "barrier-count", decl.sym.name, decl.loc, [(decl.loc, "later access")],
                lambda level, fallback, decl=decl: self._measured(lambda: self._balance(decl)),
                description=f"{decl.sym.name} has as many Awaits as Arrives when freed"))
        return out

    def _await(self, site: AwaitSite) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
        counts = self.vis.barriers
        decl = self.model.barriers[site.barrier]
        inst = self.enc.instance(site.ctx, "w")
        elem = tuple(self.enc.value(e, inst.iters) for e in site.element)
        a_max = counts.a_max(decl, site, elem, inst)
        short = short_of_partner(counts, self.model, decl, elem, inst, a_max)
        conds, names = [inst.valid, a_max >= 0, short], {**self.size_names, **inst.names}
        if decl.ring is not None:  # DIAL-11: and the lockstep schedule misses one too
            missed, more = lockstep_missed(self.enc, counts, self.model)
            conds.append(missed)
            names.update(more)
        return self.base + conds, names

    def _one_shot(self, site: ArriveSite) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
        found, names = second_arrive(self.enc, self.vis.barriers, self.model, site)
        return self.base + found, {**self.size_names, **names}

    def _trailing(self, site: TmaSite) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
        found, names = trailing_after_arrive(self.enc, self.vis.barriers, self.model, site)
        return self.base + found, {**self.size_names, **names}

    def _recycled(self, decl: BarrierDecl) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
        found, names = unrecycled_slot(self.enc, self.vis.barriers, decl)
        return self.base + found, {**self.size_names, **names}

    def _balance(self, decl: BarrierDecl) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
        counts = self.vis.barriers
        point = free_point(self.enc, decl, "f")
        elem, conds = element_vars(self.enc, decl, "f")
        arrived = counts.arrives_before(decl, elem, point)
        awaits = counts.await_sites(decl)
        if awaits and awaits[0].n < 0:
            awaited = counts.awaits_before(decl, elem, point)
            imbalance = arrived != awaited
        else:
            witness: z3.ArithRef = z3.IntVal(0, self.zctx)
            for site in awaits:
                last = last_instance(self.enc, site, point, elem)
                value = counts.arrives_before(decl, elem, last) - site.n
                witness = z3.If(z3.And(last.valid, value > witness), value, witness)
            imbalance = witness < arrived
        names = {**self.size_names, **point.names}
        names.update({f"elem{k}": v for k, v in enumerate(elem)})
        return self.base + [point.valid, *conds, imbalance], names

    def rings(self) -> list[Obligation]:
        """SEM-6.8: one ring lemma per Arrive site on an mbarrier (encode/ring_invariant.py)."""
        out = []
        for site, guard, self_guarded, lag in ring_sites(self.model):
            name = site.barrier.name

            def make(site: ArriveSite = site, guard: ir.Sym = guard,
                     self_guarded: bool = self_guarded, lag: int = lag
                     ) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
                q, negated = ring_lemma(self.enc, self.vis.barriers, self.model, site, guard,
                                        self_guarded, lag)
                return self.base + negated, {**self.size_names, **q.names}

            out.append(Obligation(
                f"ring:{name}@{site.loc.line}:{site.loc.col}", "SEM-6.8", "ring-overrun",
                name, site.loc, [(site.loc, "later access")],
                lambda level, fallback, make=make: self._measured(make),
                description=f"Arrive on {name} reuses a ring slot only after its Await on "
                f"{guard.name} released it"))
        return out

    def transactions(self) -> list[Obligation]:
        """TX-1 / SEM-8.6: every mbarrier phase a TMA load completes on balances its bytes
        (encode/transactions.py)."""
        out = []
        for site in self.model.tmas:
            name = site.trailing.barrier.name

            def make(what: str, site: TmaSite = site
                     ) -> tuple[list[z3.BoolRef], dict[str, z3.ArithRef]]:
                if what == "bytes":
                    return self.base + byte_mismatch(self.enc, site), dict(self.size_names)
                found, names = phase_disagreement(self.enc, self.vis.barriers, self.model, site)
                return self.base + found, {**self.size_names, **names}

            for what in checks(site):
                out.append(Obligation(
                    f"tx-{what}:{name}@{site.loc.line}:{site.loc.col}", "SEM-8.6",
                    "transaction-count", name, site.loc, [(site.loc, "later access")],
                    lambda level, fallback, make=make, what=what: self._measured(
                        lambda: make(what)),
                    description=f"the TMA's expect-tx and complete-tx bytes on {name} "
                    f"balance ({what})"))
        return out

    def premise(self, key: int) -> Obligation:
        """The obligation of one premise a closed form relied on (nest_sums.Premise: a loop
        extent summed symbolically is never negative)."""
        premise = self.enc.premises[key]
        loc = premise.loc
        return self.unique(Obligation(
            f"extent@{loc.line}:{loc.col}", "SEM-6.4", "premise", "", loc, [(loc, "loop")],
            lambda level, fallback: Built(self.base + premise.negated,
                                          {**self.size_names, **premise.names}),
            description="the loop's extent is non-negative (premise of the closed-form "
            "barrier count)"))

    def unique(self, ob: Obligation) -> Obligation:
        """Give `ob` an id no earlier obligation of this proc has: statements a scheduling
        operation copied (`cut_loop`) keep their source location, so two obligations can
        name the same lines; the repeats become `id#2`, `id#3`, ... in order. Answers,
        refinement steps, certificates and `--smt2` files are keyed by id, so a shared id
        would let one obligation's answer stand for another's (specs/verification.md)."""
        self.issued[ob.id] = count = self.issued.get(ob.id, 0) + 1
        if count > 1:
            ob.id = f"{ob.id}#{count}"
        return ob

    def releases(self, prune: bool = True) -> list[Obligation]:
        """CG-R1: the SEM-4.7 free check of each early-release candidate, as the hazard pairs
        of the end-of-scope free (every earlier access of the variable against the free, the
        same builder), ids prefixed `release:`. They decide codegen's layout, never the
        verdict. PR-4 is not applied (the release site is not among the variable's sites):
        fewer pairs settled without a solver, none settled wrongly."""
        out = []
        tracked = [s for s in self.model.accesses if s.tracked and not s.is_free]
        for rel in self.model.releases:
            site = rel.site
            for earlier in (s for s in tracked if s.buf == site.buf):
                flag = required_flag(earlier, site)
                if flag is None:
                    continue
                ob = self.hazard(earlier, site, flag)
                ob.id, ob.release = RELEASE_PREFIX + ob.id, rel.id
                ob.description = f"early release ({rel.id}): {ob.description}"
                if prune:
                    ob.discharged_by = self.pruner.settled_by(earlier, site, flag)
                out.append(self.unique(ob))
        return out

    def last_use_frees(self, prune: bool = True) -> list[Obligation]:
        """DIAL-17: in an endgame proc the SEM-4.7 free check of a shared-memory variable also
        sits where upstream's suballocator frees it (the early-release candidate after its
        last use), and there it decides the verdict: the release obligations, renamed."""
        if self.model.proc.dialect != ENDGAME:
            return []
        out = self.releases(prune)
        for ob in out:
            ob.id = LAST_USE_PREFIX + ob.id.removeprefix(RELEASE_PREFIX)
            ob.rule, ob.release = "DIAL-17", ""
            ob.description = ob.description.replace("early release", "free at last use", 1)
        return out

    def all(self, prune: bool = True) -> list[Obligation]:
        return [self.unique(ob) for ob in self.bounds(prune) + self.barriers() + self.rings() +
                self.transactions() + self.hazards(prune) + self.last_use_frees(prune)]
