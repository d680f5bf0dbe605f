"""Distributed memory deduction (COLL-5.1..5.7): which leading dimensions of an allocation are
spread over thread collectives, and which threads own each shard.

Reads the allocation-site tiling, the memory's native unit (None for barrier arrays), every
use (use-site tiling plus its index list) and the shape; produces a `Distribution` (R, pitch
tuple, base offset, shard shape) and the owner thread sets, with ownership confirmed on the
ground-truth thread sets (COLL-7.4). An mbarrier array is deduced once from its Arrive side and
once from its Await side, which must then agree on every CTA-in-cluster axis (COLL-5.14).
Errors carry "Distributed memory deduction for X failed:" (ERR-A23). Non-goals:
callee-distributed units (COLL-5.12), barrier raw-mode consistency between Arrive and Await
(COLL-5.10), multicast masks (COLL-5.11), lowering.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from math import prod

from verifier.collectives.completion import CompletionError, unit_label
from verifier.collectives.equivalence import base_mismatch
from verifier.collectives.matching import expected_box, unit_completion, unit_type
from verifier.collectives.membership import thread_groups
from verifier.collectives.tiling import Guard, Label, Tiling, by_position, linear_base_offset
from verifier.collectives.validate import DISAGREE, validate_tiling
from verifier.diagnostics import InternalError, RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction
from verifier.lang.stdlib.units import CollUnit


@dataclass(frozen=True, slots=True)
class NotAVariable:
    """An index that is not a plain variable (for "Expected single variable name, not ...")."""

    text: str


@dataclass(frozen=True, slots=True)
class Distribution:
    """Result of distributed memory deduction. Rules: COLL-5.2, COLL-5.6"""

    name: str
    native_unit: CollUnit | None
    R: int
    pitches: tuple[int, ...]
    iter_names: tuple[str, ...]
    extents: tuple[int, ...]
    shard_shape: tuple[object, ...]
    base_offset: int
    outer: tuple[tuple[object, str, int], ...]
    block_dim: int
    cluster_dim: int


@dataclass(frozen=True, slots=True)
class _Use:
    tiling: Tiling
    completed: Tiling
    consumed: tuple[Guard, ...]


class _Deduction:
    """One deduction run; holds the name for messages."""

    def __init__(self, name: str, native: CollUnit | None, shape: Sequence[object],
                 dev: CudaDeviceFunction) -> None:
        self.name, self.native, self.shape, self.dev = name, native, shape, dev

    def fail(self, detail: str, rule: str) -> RejectedInput:
        return RejectedInput(f"Distributed memory deduction for {self.name} failed: {detail}",
                             code="ERR-A23", rule=rule, variable=self.name)

    def complete_for_native(self, t: Tiling, rule: str) -> Tiling:
        assert self.native is not None
        try:
            done = unit_completion(t, self.native)
        except CompletionError as err:
            raise self.fail(err.message, rule) from err
        validate_tiling(done, self.dev)
        return done

    def check_alloc(self, alloc: Tiling) -> None:
        """Every intact axis of the completed allocation tiling is full. Rules: COLL-5.4"""
        if self.native is None:
            return
        done = self.complete_for_native(alloc, "COLL-5.4")
        for i, axis in enumerate(done.axes):
            if axis.label is Label.INTACT and axis.box != axis.extent:
                raise self.fail(f"Missing threads to match {unit_label(self.native)} "
                                f"(wrong @ box[{i}]): domain={done.domain}, box={done.box}; "
                                f"expected box={expected_box(done)}", "COLL-5.4")

    def use(self, t: Tiling, idx: Sequence[object], depth: int) -> _Use:
        """Needed iterators and index consumption for one use. Rules: COLL-5.5, COLL-5.6"""
        if self.native is not None:
            done = self.complete_for_native(t, "COLL-5.5")
            for i, axis in enumerate(done.axes):
                if axis.label is Label.SUBDIV and axis.box != 1:
                    raise self.fail(f"Missing subdivision on dims[{i}] to match "
                                    f"{unit_label(self.native)}: domain={done.domain}, "
                                    f"box={done.box}; expected box={expected_box(done)}",
                                    "COLL-5.5")
            axes = [a for a in done.axes if a.label is Label.SUBDIV]
        else:
            done, axes = t, list(t.axes)
        needed = {op.iter_key: op.iter_name for a in axes for op in a.ops
                  if op.iter_key is not None and op.tile_count > 1 and op.depth > depth}
        remaining = dict(needed)
        consumed: list[Guard] = []
        for i, entry in enumerate(idx):
            if self.native is not None and not remaining:
                break
            consumed.append(self.consume(t, i, entry, needed, remaining))
        if remaining:
            raise self.fail("Missing: " + ", ".join(sorted(remaining.values())), "COLL-5.6")
        return _Use(t, done, tuple(consumed))

    def consume(self, t: Tiling, i: int, entry: object, needed: Mapping[object, str],
                remaining: dict[object, str]) -> Guard:
        if entry is None or isinstance(entry, NotAVariable):
            text = entry.text if isinstance(entry, NotAVariable) else "an expression"
            if self.native is None:  # a barrier: upstream's wording for barrier indices
                raise self.fail(f"expected a plain variable, not {text}, in {self.name}[...] "
                                "(Expected single variable name)", "COLL-5.6")
            raise self.fail(f"Expected single variable name, not {text}", "COLL-5.6")
        guard = t.guard_of(entry)
        if guard is None:
            raise self.fail(f"Expected cuda_threads-loop iterator, not {entry}", "COLL-5.6")
        label = guard.iter_name or str(entry)
        if guard.thread_pitch != 0:
            if entry not in needed:
                raise self.fail(f"{label} is not an expected distributed iterator", "COLL-5.6")
            if entry not in remaining:
                raise self.fail(f"{label} repeated unexectedly", "COLL-5.6")
            del remaining[entry]
        extent = self.shape[i] if i < len(self.shape) else None
        if not isinstance(extent, int) or isinstance(extent, bool):
            text = f" = {extent.text}" if isinstance(extent, NotAVariable) else ""
            raise self.fail(f"shape[{i}]{text} must be constant (to match {label}.tile_count "
                            f"= {guard.tile_count})", "COLL-5.6")
        if guard.tile_count != extent:
            raise self.fail(f"{label}.tile_count = {guard.tile_count}; must be {extent} to "
                            "match underlying tensor", "COLL-5.6")
        return guard

    def consistent(self, first: _Use, other: _Use) -> None:
        """Same pitches, same R, same base collective (subdiv-only). Rules: COLL-5.7, 1.15"""
        ctx = f" (first use: {_iters_text(first)}; this use: {_iters_text(other)})"
        for g1, g2 in zip(first.consumed, other.consumed):
            if g1.thread_pitch != g2.thread_pitch:
                raise self.fail(f"{g1.iter_name}.thread_pitch ({g1.thread_pitch}) != "
                                f"{g2.iter_name}.thread_pitch ({g2.thread_pitch}){ctx}",
                                "COLL-5.7")
        if len(first.consumed) != len(other.consumed):
            raise self.fail("Different number of distributed dimensions deduced; possible "
                            f"reason, used iterator with tile_count=1 [(0, 1)-loop]{ctx}",
                            "COLL-5.7")
        if self.native is None:
            return
        reason = base_mismatch(first.completed, other.completed, subdiv_only=True)
        if reason is not None:
            raise self.fail(f"{reason}{ctx}", "COLL-1.15")


def _iters_text(use: _Use) -> str:
    items = [f"{g.iter_name} = {g.expr.to_c()}; thread_pitch={g.thread_pitch}"
             for g in use.consumed]
    return "[" + ", ".join(items) + "]"


def deduce_distribution(alloc_tiling: Tiling, native_unit: CollUnit | None,
                        uses: Sequence[tuple[Tiling, Sequence[object]]],
                        shape: Sequence[object], dev: CudaDeviceFunction, *,
                        name: str = "x") -> Distribution:
    """Deduce R, the pitch tuple and the base offset from the uses of one allocation.

    Each use is (use-site tiling, index list); an index entry is the iterator key of a plain
    variable, a `NotAVariable`, or None. `native_unit` None means a barrier array (every index
    is distributed). Ownership is then confirmed on the guards. Rules: COLL-5.1, COLL-5.2,
    COLL-5.4, COLL-5.5, COLL-5.6, COLL-5.7, COLL-7.4
    """
    run = _Deduction(name, native_unit, shape, dev)
    run.check_alloc(alloc_tiling)
    done: list[_Use] = []
    for use_tiling, idx in uses:
        current = run.use(use_tiling, idx, alloc_tiling.depth)
        if done:
            run.consistent(done[0], current)
        done.append(current)
    first = done[0] if done else None
    consumed = first.consumed if first is not None else ()
    r_dims = len(consumed)
    outer = tuple((g.iter_key, g.iter_name, g.thread_pitch) for g in alloc_tiling.iter_guards()
                  if g.thread_pitch != 0)
    dist = Distribution(
        name, native_unit, r_dims, tuple(g.thread_pitch for g in consumed),
        tuple(g.iter_name for g in consumed), tuple(g.tile_count for g in consumed),
        tuple(shape[r_dims:]),
        linear_base_offset(first.completed, True) if first and native_unit else 0,
        outer, dev.blockDim, dev.clusterDim)
    if native_unit is not None and first is not None:
        _confirm_ownership(dist, done, dev)
    return dist


def roles_agree(arrive: Distribution, await_: Distribution, *, name: str) -> None:
    """The Arrive-side and Await-side deductions of one mbarrier array (COLL-5.14) place every
    element in the same CTA: an index is a CTA-in-cluster axis (thread pitch a multiple of
    blockDim, COLL-5.11) on both sides with the same pitch, or on neither. Pitches below
    blockDim may differ (a warp arrives, a warpgroup awaits): they only select the slice inside
    one CTA, which the lowering computes from the index values. Rules: COLL-5.14, COLL-5.11"""
    block = arrive.block_dim
    for k, (n1, p1, n2, p2) in enumerate(zip(arrive.iter_names, arrive.pitches,
                                             await_.iter_names, await_.pitches)):
        cta1, cta2 = p1 >= block, p2 >= block
        if (cta1 or cta2) and p1 != p2:
            raise RejectedInput(
                f"Distributed memory deduction for {name} failed: index {k} is {n1} "
                f"(thread_pitch {p1}) in the Arrives and {n2} (thread_pitch {p2}) in the "
                f"Awaits; a CTA-in-cluster index (thread_pitch a multiple of blockDim = "
                f"{block}) must have the same pitch on both sides, or the Arrives and Awaits "
                "would name the barrier in different CTAs", code="ERR-A23", rule="COLL-5.14",
                variable=name)


def owner_threads(dist: Distribution, shard_index: Sequence[int],
                  outer: Mapping[object, int] | None = None) -> frozenset[int]:
    """Threads owning shard `shard_index` of the allocation instance selected by the
    enclosing iterators `outer` (default all 0): those whose coordinates on every subdivided
    axis of the native unit's type equal those of L + sum_j i_j*p_j + sum_y sigma_y*p_y.

    Rules: COLL-5.2, COLL-7.4
    """
    if dist.native_unit is None:
        raise InternalError(f"barrier array {dist.name} has no native unit: no owner threads")
    if len(shard_index) != dist.R:
        raise InternalError(f"{dist.name}: shard index {tuple(shard_index)} needs {dist.R} "
                            "entries")
    typ = unit_type(dist.native_unit, dist.block_dim, dist.cluster_dim)
    if typ is None:
        raise InternalError(f"native unit {unit_label(dist.native_unit)} has no aligned type")
    domain, labels = typ
    outer = outer or {}
    base = dist.base_offset + sum(i * p for i, p in zip(shard_index, dist.pitches))
    base += sum(outer.get(key, 0) * pitch for key, _, pitch in dist.outer)
    pitches = [prod(domain[m + 1:]) for m in range(len(domain))]
    fixed = [(p, d, (base // p) % d) for p, d, lab in zip(pitches, domain, labels)
             if lab is Label.SUBDIV]
    total = dist.block_dim * dist.cluster_dim
    return frozenset(n for n in range(total) if all((n // p) % d == c for p, d, c in fixed))


def _confirm_ownership(dist: Distribution, uses: list[_Use], dev: CudaDeviceFunction) -> None:
    """Each use touches only the owner of its shard, and shards are disjoint. Rules: COLL-7.4"""
    owners: dict[tuple[tuple[int, ...], tuple[int, ...]], frozenset[int]] = {}
    confirmed: set[tuple[object, ...]] = set()
    for use in uses:  # a proc of many phases reuses few shards: each owner set is built once
        tg = thread_groups(use.tiling, dev)
        position = {key: i for i, key in enumerate(tg.keys)}
        # the check reads the keys only through `position`: uses whose tilings differ only
        # in their keys (`by_position`) and pick the same positions are checked once
        shape = (by_position(use.tiling)[0], tuple(position[g.iter_key] for g in use.consumed),
                 tuple(position.get(key) for key, _, _ in dist.outer))
        if shape in confirmed:
            continue
        confirmed.add(shape)
        for sigma, members in tg.groups.items():
            index = [sigma[position[g.iter_key]] for g in use.consumed]
            outer = {key: sigma[position[key]] for key, _, _ in dist.outer if key in position}
            key = (tuple(index), tuple(outer.get(k, 0) for k, _, _ in dist.outer))
            owner = owners.get(key)
            if owner is None:
                owner = owners[key] = owner_threads(dist, index, outer)
            if not members <= owner:
                n = min(members - owner)
                raise RejectedInput(f"{DISAGREE}: thread n={n} uses shard {tuple(index)} of "
                                    f"{dist.name}, owned by other threads", code="ERR-V08",
                                    rule="COLL-7.4", variable=dist.name)
    seen: dict[frozenset[int], tuple[int, ...]] = {}
    for index in product(*(range(e) for e in dist.extents)):
        owner = owner_threads(dist, index)
        if owner in seen:
            raise RejectedInput(f"{DISAGREE}: shards {seen[owner]} and {index} of {dist.name} "
                                "have the same owner threads", code="ERR-V08", rule="COLL-7.4",
                                variable=dist.name)
        seen[owner] = index
