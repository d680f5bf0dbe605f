"""`CudaMbarrier` rings (semantics.md SEM-8.5, SEM-8.6, language.md LANG-5.15..5.19): planning.

Reads what the plan collected about each mbarrier variable of one device function (allocation,
Arrive collectives, sync-tls and multicast targets, Await lags, TMA trailing uses, every use's
tiling and index list); produces one `MbarrierRing` per variable (ring depth, per-CTA slices and
their arrival counts, CTA-in-cluster digits and the multicast rank deltas, fixed SMEM offset).
The text that realises a ring is in `mbarrier_text.py`.

A slice is one element of z in one instance of its allocation within one CTA (COLL-5.11): the
slice index is a mixed radix (last digit fastest) over the explicit indices of z followed by the
iterators of the enclosing `cuda_threads` ops of the allocation tiling with t > 1
(`Distribution.outer`), leaving out the CTA-in-cluster digits (thread pitch a multiple of
blockDim): each CTA holds its own copy of every slice. Each slice is a ring of `depth` physical
mbarriers; slot s serves arrives s, s + d, ...; the k-th non-trivial await on slot s waits for
phase parity k mod 2. The per-thread state (ArriveIdx, AwaitIdx, one parity bit per slot,
Skips ≤ lag) lives in registers for the whole persistent task loop (the free checks of SEM-4.7
order every arrive of an earlier instance before the next one). A thread names one slice of z
per role (LANG-5.12, COLL-5.9), checked per slice on the ground-truth thread sets; otherwise a
thread's own counts would not be the slice's (`Unsupported`).

Multicast Arrives (`>> z[m, :] >> z[:, n]`) name CTA-in-cluster digits by intervals; the target
CTAs are the arriving CTA's rank XOR each rank delta (power-of-two extents and strides, COLL-5.11),
so the arrival count of a slice is |Arrive collective| × |deltas| (SEM-8.5). A TMA trailing
barrier (SEM-8.6) addresses the slot the issuing thread's next Arrive completes, so every issuing
thread must arrive on the same slice.
Non-goals: remote `Sm80_cp_async` arrives, non-power-of-two multicast, per-CTA counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import product
from math import prod

from verifier import collectives
from verifier.collectives import Tiling
from verifier.diagnostics import InternalError, SporkError, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.config import CudaDeviceFunction
from verifier.lang.ir.guards import guard_map, ring_depth
from verifier.lang.stdlib.timelines import SyncTL, implements

MBARRIER_BYTES = 8
MAX_DEPTH = 32  # one parity bit per slot in a uint32_t


@dataclass(slots=True)
class RingFacts:
    """What the plan walk saw of one mbarrier variable. `masks` holds, per Arrive, which
    dimensions of each target expression are intervals (multicast); tcgen05.commits are the
    role "Commit" (they arrive on behalf of the CTAs they name, BW-CG-4)."""

    alloc: ir.Alloc
    tiling: Tiling
    firsts: list[SyncTL] = field(default_factory=list)
    lags: list[int] = field(default_factory=list)
    roles: dict[str, list[tuple[Tiling, tuple[object, ...], SrcLoc]]] = field(
        default_factory=lambda: {"Arrive": [], "Await": [], "Commit": []})
    masks: list[tuple[tuple[tuple[bool, ...], ...], SrcLoc]] = field(default_factory=list)
    trailing: list[tuple[Tiling, tuple[object, ...], SrcLoc]] = field(default_factory=list)

    @property
    def sym(self) -> ir.Sym:
        return self.alloc.name


@dataclass(frozen=True, slots=True)
class SliceDigit:
    """One digit of the per-CTA slice index: an explicit index of z (`key` None) or an
    enclosing iterator of the allocation (`key` its Sym), with its extent. Rules: COLL-5.11"""

    name: str
    key: ir.Sym | None
    extent: int


@dataclass(frozen=True, slots=True)
class CtaDigit:
    """A CTA-in-cluster digit (not materialised): explicit index `position` of z (None for an
    enclosing iterator `key`), its extent and the CTA-rank stride it moves by. Rules: COLL-5.11"""

    name: str
    key: ir.Sym | None
    position: int | None
    extent: int
    stride: int


@dataclass(frozen=True, slots=True)
class MbarrierRing:
    """One mbarrier variable as lowered; `counts[i]` is the arrival count of slice i; an
    Arrive reaches the CTAs of rank (own rank XOR delta) for each of `rank_deltas`; `cluster`
    selects cluster-scope waits and setup (clusterDim > 1); `tma` marks a ring TMA
    transactions complete on. Rules: SEM-8.5, LANG-5.19, COLL-5.11"""

    sym: ir.Sym
    digits: tuple[SliceDigit, ...]
    depth: int
    lag: int
    counts: tuple[int, ...]
    offset: int
    cp_async: bool
    cta_digits: tuple[CtaDigit, ...] = ()
    rank_deltas: tuple[int, ...] = (0,)
    cluster: bool = False
    tma: bool = False  # some TMA completes on it (the async proxy updates it)
    commit: bool = False  # arrived on by tcgen05.commit only (BW-CG-4)

    @property
    def slices(self) -> int:
        return prod(d.extent for d in self.digits)

    @property
    def nbytes(self) -> int:
        return MBARRIER_BYTES * self.depth * self.slices

    @property
    def cta_positions(self) -> frozenset[int]:
        return frozenset(d.position for d in self.cta_digits if d.position is not None)


def new_facts(s: ir.Alloc, tiling: Tiling) -> RingFacts:
    """Start collecting one mbarrier allocation."""
    return RingFacts(s, tiling)


def note_arrive(facts: RingFacts, s: ir.Arrive, tiling: Tiling,
                home: tuple[object, ...]) -> None:
    """Sync-tl, home element and multicast targets of one Arrive. Rules: SEM-8.5, LANG-5.6,
    LANG-5.20"""
    if not (implements(s.first, SyncTL.cuda_in_order) or s.first is SyncTL.tcgen05_commit or
            implements(s.first, SyncTL.Sm80_cp_async)):
        raise Unsupported(f"mbarrier Arrive({s.first}) is not lowered (LANG-5.20 allows "
                          "⊑ cuda_in_order or ⊑ Sm80_cp_async, BW-3.1 tcgen05_commit)", s.loc,
                          code="ERR-L04", rule="LANG-5.20")
    facts.firsts.append(s.first)
    role = "Commit" if s.first is SyncTL.tcgen05_commit else "Arrive"
    facts.roles[role].append((tiling, home, s.loc))
    facts.masks.append((tuple(tuple(isinstance(a, ir.Interval) for a in t.idx)
                              for t in s.targets), s.loc))


def note_await(facts: RingFacts, s: ir.Await, tiling: Tiling,
               entries: tuple[object, ...]) -> None:
    """Await-indexed only: lag = ~N ≥ 0. Rules: LANG-5.9, SEM-6.4"""
    if s.n >= 0:
        raise InternalError(f"mbarrier Await({facts.sym.name}, {s.second}, {s.n}) with N ≥ 0",
                            s.loc)
    facts.lags.append(~s.n)
    facts.roles["Await"].append((tiling, entries, s.loc))


def note_trailing(facts: RingFacts, tiling: Tiling, entries: tuple[object, ...],
                  loc: SrcLoc) -> None:
    """A TMA call's trailing `>> z[...]` (None entries are intervals). Rules: SEM-8.6"""
    facts.trailing.append((tiling, entries, loc))


def _guarded_by(facts: dict[ir.Sym, RingFacts]) -> dict[ir.Sym, ir.Sym]:
    """guardedBy(z) (LANG-5.15, `lang.ir.guards`); a guard outside this device function's
    mbarriers is an internal error (the static checks reject it)."""
    links: dict[ir.Sym, ir.Sym | None] = {}
    for sym, f in facts.items():
        typ = f.alloc.typ
        assert isinstance(typ, ir.BarrierType)
        if typ.guarded_by is not None and typ.guarded_by not in facts:
            raise InternalError(f"{sym.name} guarded by {typ.guarded_by.name}, not an mbarrier "
                                "here", f.alloc.loc)
        links[sym] = typ.guarded_by
    return guard_map(links)


def _one(values: list[int], what: str, f: RingFacts) -> int:
    if not values:
        raise InternalError(f"{f.sym.name} has no {what}", f.alloc.loc)
    if len(set(values)) != 1:
        raise InternalError(f"{f.sym.name}: non-uniform {what} {sorted(set(values))}",
                            f.alloc.loc)
    return values[0]


def _extents(f: RingFacts) -> list[int]:
    """The constant shape of the barrier array."""
    typ = f.alloc.typ
    assert isinstance(typ, ir.BarrierType)
    extents = []
    for d in typ.shape:
        if not (isinstance(d, ir.Const) and isinstance(d.value, int)):
            raise InternalError(f"{f.sym.name}: non-constant barrier shape", f.alloc.loc)
        extents.append(d.value)
    return extents


def _distribution(f: RingFacts, dev: CudaDeviceFunction) -> collectives.Distribution:
    """Constant extents; every index distributed (COLL-5.9), checked by the deduction. The
    Arrive side and the Await side are deduced apart and agree on every CTA-in-cluster index
    (COLL-5.14), so the layout is read off the Arrives (the Awaits when none)."""
    extents = _extents(f)
    sides = [[(t, idx) for t, idx, _ in f.roles[role]] for role in ("Arrive", "Await")]
    try:
        dist, other = (collectives.deduce_distribution(f.tiling, None, uses, extents, dev,
                                                       name=f.sym.name) for uses in sides)
        if all(sides):
            collectives.roles_agree(dist, other, name=f.sym.name)
    except SporkError as err:
        if err.loc.line == 0:
            err.loc = f.alloc.loc
        raise
    if not sides[0]:
        dist = other
    if dist.R != len(extents):
        raise InternalError(f"{f.sym.name}: {dist.R} of {len(extents)} indices distributed",
                            f.alloc.loc)
    return dist


def slice_digits(name: str, alloc_tiling: Tiling, dist: collectives.Distribution,
                 dev: CudaDeviceFunction, loc: SrcLoc | None = None
                 ) -> tuple[tuple[SliceDigit, ...], tuple[CtaDigit, ...]]:
    """The per-CTA slice digits, most significant first (the explicit indices, then the
    enclosing ops of the allocation tiling with t > 1, loop order), and the CTA-in-cluster
    digits (thread pitch a multiple of blockDim; an explicit index over a (0, 1)-loop has
    pitch 0 and extent 1). Rules: COLL-5.11, SEM-8.5"""
    raw: list[tuple[str, ir.Sym | None, int | None, int, int]] = [
        (n, None, k, p, e)
        for k, (n, p, e) in enumerate(zip(dist.iter_names, dist.pitches, dist.extents))]
    for key, iter_name, pitch in dist.outer:
        guard = alloc_tiling.guard_of(key)
        if guard is None or not isinstance(key, ir.Sym):
            raise InternalError(f"{name}: enclosing iterator {iter_name} has no guard", loc)
        raw.append((iter_name, key, None, pitch, guard.tile_count))
    local: list[SliceDigit] = []
    ctas: list[CtaDigit] = []
    for iter_name, key, position, pitch, extent in raw:
        if pitch <= 0 and extent > 1:
            raise InternalError(f"{name}: a slice iterator with t > 1 and pitch 0", loc)
        if pitch < dev.blockDim:
            local.append(SliceDigit(iter_name, key, extent))
            continue
        stride = pitch // dev.blockDim
        if pitch % dev.blockDim or extent * stride > dev.clusterDim:
            raise Unsupported(f"codegen of CudaMbarrier {name}: iterator {iter_name} has thread "
                              f"pitch {pitch}, not a CTA-in-cluster axis of a cluster of "
                              f"{dev.clusterDim} CTAs of {dev.blockDim} threads", loc,
                              code="ERR-V11", rule="COLL-5.11")
        ctas.append(CtaDigit(iter_name, key, position, extent, stride))
    return tuple(local), tuple(ctas)


def _slice_index(digits: tuple[SliceDigit, ...], values: list[int]) -> int:
    """Mixed radix, last digit fastest. Rules: COLL-5.11"""
    index = 0
    for d, v in zip(digits, values, strict=True):
        index = index * d.extent + v
    return index


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def rank_deltas(f: RingFacts, ctas: tuple[CtaDigit, ...]) -> tuple[int, ...]:
    """The CTA-rank XOR deltas one Arrive reaches: per target expression, every value of its
    interval dimensions (CTA digits only, power-of-two extents and strides; an interval over
    an extent-1 dimension names only the arriving CTA's element), XOR-relative to the arriving
    CTA. Every Arrive on the variable must reach the same set. Rules: SEM-8.5, COLL-5.11,
    LANG-5.6"""
    by_position = {d.position: d for d in ctas if d.position is not None}
    extents = _extents(f)
    found: set[tuple[int, ...]] = set()
    for masks, loc in f.masks:
        deltas: set[int] = set()
        for mask in masks:
            ranges = []
            for k, interval in enumerate(mask):
                if not interval or extents[k] == 1:
                    ranges.append([0])
                    continue
                digit = by_position.get(k)
                if digit is None:
                    raise Unsupported(f"multicast Arrive on {f.sym.name}: dimension {k} is not "
                                      "a CTA-in-cluster axis", loc, code="ERR-V11",
                                      rule="SEM-8.5")
                if not (_pow2(digit.extent) and _pow2(digit.stride)):
                    raise Unsupported(f"multicast Arrive on {f.sym.name}: CTA axis "
                                      f"{digit.name} has extent {digit.extent} and rank stride "
                                      f"{digit.stride} (CTA masks need powers of two)", loc,
                                      code="ERR-V11", rule="COLL-5.11")
                ranges.append([v * digit.stride for v in range(digit.extent)])
            deltas.update(sum(combo) for combo in product(*ranges))
        found.add(tuple(sorted(deltas)))
    if len(found) > 1:
        raise Unsupported(f"the Arrives on {f.sym.name} reach different CTA sets "
                          f"{sorted(found)}: one arrival count per slice is needed",
                          f.alloc.loc, code="ERR-V11", rule="SEM-8.5")
    return found.pop() if found else (0,)


def _instances(tiling: Tiling, dev: CudaDeviceFunction
               ) -> Iterator[tuple[dict[object, int], frozenset[int]]]:
    """(iterator values, thread set) of every non-empty instance of a tiling."""
    guards = tiling.iter_guards()
    for values in product(*(range(g.tile_count) for g in guards)):
        iters: dict[object, int] = {g.iter_key: v for g, v in zip(guards, values)}
        threads = collectives.thread_set(tiling, iters, dev)
        if threads:
            yield iters, threads


def all_threads(tiling: Tiling, dev: CudaDeviceFunction) -> frozenset[int]:
    """Every thread (r * blockDim + x) some instance of `tiling` runs."""
    return frozenset().union(*(threads for _, threads in _instances(tiling, dev)))


@dataclass(frozen=True, slots=True)
class _Layout:
    """How an element's digits split into the per-CTA slice and the CTA part."""

    sym: ir.Sym
    local: tuple[SliceDigit, ...]
    ctas: tuple[CtaDigit, ...]

    def element(self, entries: tuple[object, ...], iters: dict[object, int],
                loc: SrcLoc) -> tuple[tuple[int, ...], int]:
        """(CTA digit values, local slice index) of the element an instance names (a None
        entry, an interval, counts as 0)."""
        cta, index, _ = self.named(entries, iters, loc)
        return cta, index

    def named(self, entries: tuple[object, ...], iters: dict[object, int],
              loc: SrcLoc) -> tuple[tuple[int, ...], int, str]:
        """`element`, and its text: `z[i, j] (w = 1)` with the enclosing iterators."""
        cta_pos = {d.position for d in self.ctas if d.position is not None}
        explicit = [0 if e is None else iters.get(e, 0) for e in entries]
        values = [v for k, v in enumerate(explicit) if k not in cta_pos]
        for d in self.local:
            if d.key is not None:
                if d.key not in iters:
                    raise InternalError(f"a use of {self.sym.name} outside its allocation's "
                                        "thread loops", loc)
                values.append(iters[d.key])
        cta = tuple(explicit[d.position] if d.position is not None else iters.get(d.key, 0)
                    for d in self.ctas)
        text = f"{self.sym.name}{explicit}" if explicit else self.sym.name
        outer = [f"{d.name} = {iters[d.key]}" for d in self.local if d.key is not None]
        outer += [f"{d.name} = {iters.get(d.key, 0)}" for d in self.ctas if d.key is not None]
        label = f"{text} ({', '.join(outer)})" if outer else text
        return cta, _slice_index(self.local, values), label


def _commit_targets(layout: _Layout, home: tuple[int, ...], threads: frozenset[int],
                    dev: CudaDeviceFunction, deltas: tuple[int, ...], loc: SrcLoc
                    ) -> list[tuple[int, ...]]:
    """The CTA digits of the elements a tcgen05.commit reaches: its home element must be in the
    committing CTA (the slot address is local), and each rank delta names one more CTA.
    Rules: BW-CG-4"""
    rank = sum(v * d.stride for v, d in zip(home, layout.ctas))
    if any(n // dev.blockDim != rank for n in threads):
        raise Unsupported(f"a tcgen05.commit on {layout.sym.name} names an element of another "
                          "CTA as its home: the commit's slot address is the committing CTA's",
                          loc, code="ERR-L06", rule="BW-CG-4")
    return [tuple((rank ^ delta) // d.stride % d.extent for d in layout.ctas) for delta in deltas]


def _fixed_collectives(f: RingFacts, dev: CudaDeviceFunction, layout: _Layout,
                       deltas: tuple[int, ...]) -> tuple[int, ...]:
    """Per role (Arrive, Await), every statement instance on an element is executed by the
    same threads, and a thread names one element: then each thread's own counts are the
    slice's, and per-variable ring state is exact (checked on ground-truth thread sets,
    COLL-6.1). A TMA trailing barrier's threads arrive on the slice it names. Returns the
    arrival count of every slice: |Arrive collective| × the number of `deltas` (the CTAs
    multicasting to it), or the number of tcgen05.commits reaching it, the same in every CTA.
    Rules: SEM-8.5, SEM-8.6, COLL-5.11, BW-CG-4"""
    if f.roles["Arrive"] and f.roles["Commit"]:
        raise Unsupported(f"{f.sym.name} is arrived on by tcgen05.commit and by other Arrives",
                          f.alloc.loc, code="ERR-L06", rule="BW-CG-4")
    fanin = len(deltas)
    counts: dict[tuple[tuple[int, ...], int], int] = {}
    labels: dict[tuple[tuple[int, ...], int], str] = {}
    arrive_owner: dict[int, int] = {}
    for role, uses in f.roles.items():
        members: dict[tuple[tuple[int, ...], int], frozenset[int]] = {}
        owner: dict[int, tuple[tuple[int, ...], int]] = {}
        for tiling, entries, loc in uses:
            for iters, threads in _instances(tiling, dev):
                cta, index, label = layout.named(entries, iters, loc)
                key = (cta, index)
                labels[key] = label
                if members.setdefault(key, threads) != threads:
                    raise Unsupported(f"the {role}s on {label} are executed by different "
                                      "thread sets: per-thread ring state would miss phases",
                                      loc, code="ERR-V11", rule="SEM-8.5")
                if role == "Arrive":
                    counts[key] = len(threads) * fanin
                elif role == "Commit":
                    for target in _commit_targets(layout, cta, threads, dev, deltas, loc):
                        counts[(target, index)] = counts.get((target, index), 0) + len(threads)
                for n in threads:
                    if owner.setdefault(n, key) != key:
                        raise Unsupported(f"thread {n} names {labels[owner[n]]} and "
                                          f"{label} in its {role}s: the ring state is per "
                                          "variable", loc, code="ERR-V11", rule="SEM-8.5")
        if role in ("Arrive", "Commit"):
            arrive_owner.update({n: key[1] for n, key in owner.items()})
    _check_trailing(f, dev, layout, arrive_owner)
    per_slice: dict[int, set[int]] = {}
    for (_, index), count in counts.items():
        per_slice.setdefault(index, set()).add(count)
    slices = prod(d.extent for d in layout.local)
    for index in range(slices):
        found = per_slice.get(index)
        if not found:
            raise Unsupported(f"no thread arrives on slice {index} of {f.sym.name} (of "
                              f"{slices}): no arrival count to initialise it with", f.alloc.loc,
                              code="ERR-V11", rule="SEM-8.5")
        if len(found) > 1:
            raise Unsupported(f"slice {index} of {f.sym.name} has arrival counts "
                              f"{sorted(found)} in different CTAs; every CTA initialises its "
                              "copy alike", f.alloc.loc, code="ERR-V11", rule="SEM-8.5")
    return tuple(next(iter(per_slice[i])) for i in range(slices))


def _check_trailing(f: RingFacts, dev: CudaDeviceFunction, layout: _Layout,
                    arrive_owner: dict[int, int]) -> None:
    """Every thread issuing a TMA with `>> z[...]` arrives on the slice it names, so its
    ArriveIdx addresses the phase its next Arrive completes. Rules: SEM-8.6"""
    cta_pos = {d.position for d in layout.ctas if d.position is not None}
    extents = _extents(f)
    for tiling, entries, loc in f.trailing:
        for k, entry in enumerate(entries):
            if entry is None and k not in cta_pos and extents[k] != 1:
                raise Unsupported(f"multicast trailing barrier on {f.sym.name}: dimension {k} "
                                  "is not a CTA-in-cluster axis", loc, code="ERR-V11",
                                  rule="SEM-8.6")
        for iters, threads in _instances(tiling, dev):
            _, index = layout.element(entries, iters, loc)
            for n in sorted(threads):
                if arrive_owner.get(n) != index:
                    raise Unsupported(f"thread {n} issues a TMA completing on {f.sym.name} "
                                      "but does not arrive on that slice: its ring position "
                                      "would not name the phase", loc, code="ERR-V11",
                                      rule="SEM-8.6")


def plan_rings(facts: dict[ir.Sym, RingFacts], dev: CudaDeviceFunction,
               smem_top: int) -> tuple[dict[ir.Sym, MbarrierRing], int]:
    """Depth, counts and a fixed 8-byte-aligned SMEM offset (after every other allocation, so
    the rings outlive the tasks) per variable; returns the rings and the new SMEM extent.
    Rules: SEM-8.5, LANG-5.15, LANG-5.19"""
    guard = _guarded_by(facts)
    lags = {sym: _one(f.lags, "Await", f) for sym, f in facts.items()}
    top = -(-smem_top // MBARRIER_BYTES) * MBARRIER_BYTES
    rings: dict[ir.Sym, MbarrierRing] = {}
    for sym, f in facts.items():
        depth = ring_depth(sym, guard, lags)
        if depth <= 0:
            raise InternalError(f"{sym.name}: ring depth {depth} (ERR-L04 missed)", f.alloc.loc)
        if depth > MAX_DEPTH:
            raise Unsupported(f"{sym.name}: ring depth {depth} > {MAX_DEPTH}", f.alloc.loc,
                              code="ERR-V11", rule="SEM-8.5")
        if not f.firsts:
            raise InternalError(f"{sym.name} has no Arrive", f.alloc.loc)
        cp_async = [not implements(t, SyncTL.cuda_in_order) and t is not SyncTL.tcgen05_commit
                    for t in f.firsts]  # a tcgen05.commit arrives once, like an in-order one
        if len(set(cp_async)) != 1:
            raise Unsupported(f"the Arrives on {sym.name} mix cp.async (noinc) and in-order "
                              "sync-tls", f.alloc.loc, code="ERR-V11", rule="SEM-8.5")
        local, ctas = slice_digits(sym.name, f.tiling, _distribution(f, dev), dev, f.alloc.loc)
        deltas = rank_deltas(f, ctas)
        if cp_async[0] and deltas != (0,):
            raise Unsupported(f"{sym.name}: a cp.async (noinc) arrive is local to one CTA; it "
                              "cannot be multicast", f.alloc.loc, code="ERR-V11",
                              rule="SEM-8.5")
        counts = _fixed_collectives(f, dev, _Layout(sym, local, ctas), deltas)
        ring = MbarrierRing(sym, local, depth, lags[sym], counts, top, cp_async[0], ctas,
                            deltas, dev.clusterDim > 1, bool(f.trailing), bool(f.roles["Commit"]))
        rings[sym] = ring
        top += ring.nbytes
    return rings, top
