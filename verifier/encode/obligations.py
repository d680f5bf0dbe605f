"""Obligations: bounds (SEM-4.3) and hazard freedom of every access pair (SEM-4.5, 4.7).

Each obligation is the *negation* of what must hold, as a list of Z3 constraints: unsat means
the obligation is discharged for all sizes satisfying the asserts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import z3

from verifier.diagnostics import SrcLoc
from verifier.lang import ir
from verifier.semantics import rules
from verifier.semantics.rules import AccessKind, Flag
from verifier.check.sites import AccessSite, ProgramModel
from verifier.encode.barrier_counts import element_vars, free_point, last_instance
from verifier.encode.instances import Encoder, Instance, before, equal_on
from verifier.encode.kills import clipped_bounds, killed
from verifier.encode.ring_invariant import ring_lemma, ring_sites
from verifier.encode.transactions import byte_mismatch, phase_disagreement
from verifier.encode.visibility import ANCHORED_FALLBACK, LEVELS, VisibilityBuilder


@dataclass
class Obligation:
    id: str
    rule: str
    kind: str  # out-of-bounds | RAW | WAR | WAW
    variable: str
    loc: SrcLoc
    related: list[tuple[SrcLoc, str]]
    constraints: list[z3.BoolRef]
    names: dict[str, z3.ArithRef] = field(default_factory=dict)
    description: str = ""
    # constraints with fence chains up to a given length (None: nothing to refine)
    refine: Callable[..., list[z3.BoolRef]] | None = None


def required_flag(earlier: AccessSite, later: AccessSite) -> Flag | None:
    """The flag `later` needs on `earlier`'s record, or None when they cannot conflict."""
    if earlier.kind is AccessKind.read:
        return None if later.kind is AccessKind.read else Flag.temp
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
        self.size_names = {sym.name: var for sym, var in self.enc.sizes.items()}

    # ------------------------------------------------------------ bounds

    def bounds(self) -> list[Obligation]:
        out = []
        for site in self.model.accesses:
            if site.is_free:
                continue
            inst = self.enc.instance(site.ctx, "a")
            shape = [self.enc.value(d, {}) for d in site.shape]
            if site.element.clip_to_shape:
                continue  # a tensor-map window: the hardware clips it (SEM-4.3)
            bad, nonempty = clipped_bounds(self.enc, site, inst, shape)
            if not bad:
                continue
            if nonempty:  # a bounds-predicated store touches only its restricted window
                bad = [z3.And(*nonempty, z3.Or(*bad))]
            names = {**self.size_names, **inst.names}
            out.append(Obligation(
                f"bounds:{site.buf.name}@{site.loc.line}:{site.loc.col}", "SEM-4.3",
                "out-of-bounds", site.buf.name, site.loc, [],
                self.base + [inst.valid, z3.Or(*bad)], names,
                f"{site.kind.value} of {site.buf.name} stays in bounds"))
        return out

    # ------------------------------------------------------------ hazards

    def hazards(self) -> list[Obligation]:
        out = []
        tracked = [s for s in self.model.accesses if s.tracked]
        for later in tracked:
            for earlier in tracked:
                if earlier.buf != later.buf or earlier.is_free:
                    continue
                flag = required_flag(earlier, later)
                if flag is None:
                    continue
                out.append(self.hazard(earlier, later, flag))
        return out

    def hazard(self, sa: AccessSite, sb: AccessSite, flag: Flag) -> Obligation:
        a = self.enc.instance(sa.ctx, "a")
        b = self.enc.instance(sb.ctx, "b")
        if sb.is_free and b.thread is None:
            raise AssertionError("free at CPU scope")
        ea, ca = self.enc.element_terms(sa, a, "a")
        eb, cb = self.enc.element_terms(sb, b, "b")
        same_elem = z3.And(*[x == y for x, y in zip(ea, eb)]) if ea else \
            z3.BoolVal(True, self.zctx)
        same_alloc = equal_on(a, b, sa.alloc_loops, self.zctx)
        common = self.base + [a.valid, b.valid, ca, cb, same_elem, same_alloc,
                              before(a, b, self.zctx), z3.Not(self.killed(sa, a, sb, b, ea))]

        def with_chains(level: int, fallback: bool = False) -> list[z3.BoolRef]:
            self.vis.max_chain, self.vis.quantified = \
                ANCHORED_FALLBACK[level] if fallback else LEVELS[level]
            return common + [z3.Not(self.vis.visible(sa, a, sb, b, flag))]

        kind = _hazard_kind(sa, sb)
        what = f"free({sb.buf.name})" if sb.is_free else sb.buf.name
        names = {**self.size_names, **a.names, **b.names}
        for k, term in enumerate(ea):
            names[f"index{k}"] = term
        return Obligation(
            f"{kind}:{sb.buf.name}@{sa.loc.line}:{sa.loc.col}->{sb.loc.line}:{sb.loc.col}",
            "SEM-4.7" if sb.is_free else "SEM-4.5", kind, sb.buf.name, sb.loc,
            [(sa.loc, "earlier access"), (sb.loc, "later access")],
            with_chains(0), names,
            f"{sb.kind.value} of {what} sees {sa.kind.value} ({flag.value})", with_chains)

    def killed(self, sa: AccessSite, a: Instance, sb: AccessSite, b: Instance,
               elem: tuple[z3.ArithRef, ...]) -> z3.BoolRef:
        """A mutate between a and b drops a's record (encode/kills.py), anchored witnesses."""
        mode = self.vis.quantified
        self.vis.quantified = False
        try:
            return killed(self.enc, self.model, self.vis.witnesses, sa, a, sb, b, elem)
        finally:
            self.vis.quantified = mode

    def barriers(self) -> list[Obligation]:
        """SEM-6.7 satisfiable awaits and SEM-6.6 balanced counts at every barrier free."""
        counts = self.vis.barriers
        out = []
        for site in self.model.awaits:
            if site.n >= 0:
                continue  # arrive-indexed awaits never wait for a future arrive (SEM-6.7)
            decl = self.model.barriers[site.barrier]
            inst = self.enc.instance(site.ctx, "w")
            elem = tuple(self.enc.value(e, inst.iters) for e in site.element)
            a_max = counts.a_max(decl, site, elem, inst)
            arrived = counts.arrives_before(decl, elem, inst)
            out.append(Obligation(
                f"await:{site.barrier.name}@{site.loc.line}:{site.loc.col}", "SEM-6.7",
                "deadlock", site.barrier.name, site.loc, [(site.loc, "later access")],
                self.base + [inst.valid, a_max >= 0, arrived <= a_max],
                {**self.size_names, **inst.names},
                f"Await on {site.barrier.name} finds its paired Arrive before it"))
        for decl in self.model.barriers.values():
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
            out.append(Obligation(
                f"balance:{decl.sym.name}@{decl.loc.line}:{decl.loc.col}", "SEM-6.6",
                "barrier-count", decl.sym.name, decl.loc, [(decl.loc, "later access")],
                self.base + [point.valid, *conds, imbalance], names,
                f"{decl.sym.name} has as many Awaits as Arrives when freed"))
        return out

    def rings(self) -> list[Obligation]:
        """SEM-6.8: one ring lemma per Arrive site on an mbarrier (encode/ring_invariant.py)."""
        out = []
        for site, guard, self_guarded, lag in ring_sites(self.model):
            q, negated = ring_lemma(self.enc, self.vis.barriers, self.model, site, guard,
                                    self_guarded, lag)
            name = site.barrier.name
            out.append(Obligation(
                f"ring:{name}@{site.loc.line}:{site.loc.col}", "SEM-6.8", "ring-overrun",
                name, site.loc, [(site.loc, "later access")], self.base + negated,
                {**self.size_names, **q.names},
                f"Arrive on {name} reuses a ring slot only after its Await on {guard.name} "
                "released it"))
        return out

    def transactions(self) -> list[Obligation]:
        """TX-1 / SEM-8.6: every mbarrier phase a TMA load completes on balances its bytes
        (encode/transactions.py)."""
        out = []
        for site in self.model.tmas:
            name = site.trailing.barrier.name
            for what, found in (
                    ("bytes", (c, {}) if (c := byte_mismatch(self.enc, site)) else None),
                    ("phase", phase_disagreement(self.enc, self.vis.barriers, self.model,
                                                 site))):
                if found is None:
                    continue
                constraints, names = found
                out.append(Obligation(
                    f"tx-{what}:{name}@{site.loc.line}:{site.loc.col}", "SEM-8.6",
                    "transaction-count", name, site.loc, [(site.loc, "later access")],
                    self.base + constraints, {**self.size_names, **names},
                    f"the TMA's expect-tx and complete-tx bytes on {name} balance ({what})"))
        return out

    def premises(self, seen: set[int]) -> list[Obligation]:
        """Obligations for the premises closed forms registered since the last call
        (nest_sums.Premise: a loop extent summed symbolically is never negative)."""
        out = []
        for key, premise in list(self.enc.premises.items()):
            if key in seen:
                continue
            seen.add(key)
            loc = premise.loc
            out.append(Obligation(
                f"extent@{loc.line}:{loc.col}", "SEM-6.4", "premise", "", loc,
                [(loc, "loop")], self.base + premise.negated,
                {**self.size_names, **premise.names},
                "the loop's extent is non-negative (premise of the closed-form barrier count)"))
        return out

    def all(self) -> list[Obligation]:
        return self.bounds() + self.barriers() + self.rings() + self.transactions() + \
            self.hazards()
