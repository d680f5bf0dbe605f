"""`CudaMbarrier` rings (semantics.md SEM-8.5, language.md LANG-5.15..5.19).

Reads what the plan collected about each mbarrier variable of one device function (allocation,
Arrive collectives and sync-tls, Await lags, every use's tiling and index list); produces one
`MbarrierRing` per variable (ring depth, slices, arrival count per slice, fixed SMEM offset) and
the text that realises it: the `exo_SyncState` fields (per-thread ring state), the initialisation in
`exo_deviceSetup`, and the lowering of `Arrive(...) >> z[...]` and `Await(z[...], τ2, ~lag)`.

A slice is one element of z in one instance of its allocation (COLL-5.11): the slice index is a
mixed radix (last digit fastest) over the explicit indices of z followed by the iterators of the
enclosing `cuda_threads` ops of the allocation tiling with t > 1 (`Distribution.outer`), so an
mbarrier allocated inside a thread loop gets one slice per iteration. Each slice is a ring of
`depth` physical mbarriers; slot s serves arrives s, s + d, ..., and the k-th non-trivial await
on slot s waits for phase parity k mod 2. The per-thread state (ArriveIdx, AwaitIdx, one parity
bit per slot, Skips ≤ lag) lives in registers for the whole persistent task loop: the ring
continues across tasks and across re-entries of the variable's scope (storage is initialised
once; the free checks of SEM-4.7 order every arrive of an earlier instance before the next one,
so an await that is trivial in the per-instance model waits on an already completed phase). A
thread names one slice of z per role (LANG-5.12: one Arrive and one Await collective per
variable; COLL-5.9: every index is a distributed iterator of that collective), so the state is
per variable. Codegen checks this per slice on the ground-truth thread sets: every Arrive
(Await) on a slice is executed by one fixed thread set, and a thread names one slice per role;
otherwise a thread's own counts would not be the slice's (`Unsupported`). Each slice is
initialised with the size of its own Arrive collective.
Non-goals: multicast Arrives, clusterDim > 1 (slice iterators with pitch ≥ blockDim, CTA-in-
cluster axes) and trailing (TMA) barriers (`Unsupported`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from math import prod

from verifier import collectives
from verifier.codegen.exprs import c_add, c_mul, dense_strides
from verifier.collectives import Tiling
from verifier.diagnostics import InternalError, SporkError, SrcLoc, Unsupported
from verifier.lang import ir
from verifier.lang.config import CudaDeviceFunction
from verifier.lang.guards import guard_map, ring_depth
from verifier.lang.timelines import SYNC_SETS, QualTL, SyncTL, implements

MBARRIER_BYTES = 8
MAX_DEPTH = 32  # one parity bit per slot in a uint32_t
STATE = "exo_syncState"
STATE_TYPE = "exo_SyncState"
ASYNC_PROXY_QUALS = frozenset({QualTL.async_, QualTL.tmaS, QualTL.tmaG, QualTL.wgS})
# fence.proxy.async needs sm_90; below it there is no async proxy, so the fence is a no-op.
PROXY_FENCE = ["#if __CUDA_ARCH__ >= 900", 'asm volatile("fence.proxy.async;" ::: "memory");',
               "#endif"]

HELPERS = r"""#ifndef EXO_MBARRIER_WAIT
#define EXO_MBARRIER_WAIT
// SEM-8.5: spin until the phase of parity `parity` of the mbarrier at shared address `bar` has
// completed (try_wait from sm_90 on, test_wait below).
static __device__ __forceinline__ void exo_mbarrierWait(uint32_t bar, uint32_t parity)
{
    uint32_t exo_done = 0;
    do {
#if __CUDA_ARCH__ >= 900
        asm volatile("{\n\t.reg .pred exo_p;\n\t"
                     "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 exo_p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, exo_p;\n\t}"
                     : "=r"(exo_done) : "r"(bar), "r"(parity) : "memory");
#else
        asm volatile("{\n\t.reg .pred exo_p;\n\t"
                     "mbarrier.test_wait.parity.shared::cta.b64 exo_p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, exo_p;\n\t}"
                     : "=r"(exo_done) : "r"(bar), "r"(parity) : "memory");
#endif
    } while (!exo_done);
}
#endif
"""


@dataclass(slots=True)
class RingFacts:
    """What the plan walk saw of one mbarrier variable."""

    alloc: ir.Alloc
    tiling: Tiling
    firsts: list[SyncTL] = field(default_factory=list)
    lags: list[int] = field(default_factory=list)
    uses: list[tuple[Tiling, tuple[object, ...]]] = field(default_factory=list)
    roles: dict[str, list[tuple[Tiling, tuple[object, ...], SrcLoc]]] = field(
        default_factory=lambda: {"Arrive": [], "Await": []})

    @property
    def sym(self) -> ir.Sym:
        return self.alloc.name


@dataclass(frozen=True, slots=True)
class SliceDigit:
    """One digit of the slice index: an explicit index of z (`key` None) or an enclosing
    iterator of the allocation (`key` its Sym), with its extent. Rules: COLL-5.11"""

    name: str
    key: ir.Sym | None
    extent: int


@dataclass(frozen=True, slots=True)
class MbarrierRing:
    """One mbarrier variable as lowered; `counts[i]` is the arrival count of slice i.
    Rules: SEM-8.5, LANG-5.19, COLL-5.11"""

    sym: ir.Sym
    digits: tuple[SliceDigit, ...]
    depth: int
    lag: int
    counts: tuple[int, ...]
    offset: int
    cp_async: bool

    @property
    def slices(self) -> int:
        return prod(d.extent for d in self.digits)

    @property
    def nbytes(self) -> int:
        return MBARRIER_BYTES * self.depth * self.slices


def new_facts(s: ir.Alloc, tiling: Tiling, dev: CudaDeviceFunction) -> RingFacts:
    """Start collecting one mbarrier allocation; clusters are not lowered yet."""
    if dev.clusterDim > 1:
        raise Unsupported(f"codegen of CudaMbarrier {s.name.name} with clusterDim = "
                          f"{dev.clusterDim} is not supported yet (only single-CTA rings)",
                          s.loc, code="ERR-V11", rule="SEM-8.5")
    return RingFacts(s, tiling)


def note_arrive(facts: RingFacts, s: ir.Arrive, tiling: Tiling,
                entries: tuple[object, ...]) -> None:
    """Sync-tl and use of one Arrive (counts are per slice, `_fixed_collectives`).
    Rules: SEM-8.5, LANG-5.20"""
    if not (implements(s.first, SyncTL.cuda_in_order) or
            implements(s.first, SyncTL.Sm80_cp_async)):
        raise Unsupported(f"mbarrier Arrive({s.first}) is not lowered (LANG-5.20 allows "
                          "⊑ cuda_in_order or ⊑ Sm80_cp_async)", s.loc, code="ERR-L04",
                          rule="LANG-5.20")
    facts.firsts.append(s.first)
    facts.uses.append((tiling, entries))
    facts.roles["Arrive"].append((tiling, entries, s.loc))


def note_await(facts: RingFacts, s: ir.Await, tiling: Tiling,
               entries: tuple[object, ...]) -> None:
    """Await-indexed only: lag = ~N ≥ 0. Rules: LANG-5.9, SEM-6.4"""
    if s.n >= 0:
        raise InternalError(f"mbarrier Await({facts.sym.name}, {s.second}, {s.n}) with N ≥ 0",
                            s.loc)
    facts.lags.append(~s.n)
    facts.uses.append((tiling, entries))
    facts.roles["Await"].append((tiling, entries, s.loc))


def _guarded_by(facts: dict[ir.Sym, RingFacts]) -> dict[ir.Sym, ir.Sym]:
    """guardedBy(z) (LANG-5.15, `lang.guards`); a guard outside this device function's
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


def _distribution(f: RingFacts, dev: CudaDeviceFunction) -> collectives.Distribution:
    """Constant extents; every index distributed (COLL-5.9), checked by the deduction."""
    typ = f.alloc.typ
    assert isinstance(typ, ir.BarrierType)
    extents = []
    for d in typ.shape:
        if not (isinstance(d, ir.Const) and isinstance(d.value, int)):
            raise InternalError(f"{f.sym.name}: non-constant barrier shape", f.alloc.loc)
        extents.append(d.value)
    try:
        dist = collectives.deduce_distribution(f.tiling, None, f.uses, extents, dev,
                                               name=f.sym.name)
    except SporkError as err:
        if err.loc.line == 0:
            err.loc = f.alloc.loc
        raise
    if dist.R != len(extents):
        raise InternalError(f"{f.sym.name}: {dist.R} of {len(extents)} indices distributed",
                            f.alloc.loc)
    return dist


def slice_digits(name: str, alloc_tiling: Tiling, dist: collectives.Distribution,
                 dev: CudaDeviceFunction, loc: SrcLoc | None = None) -> tuple[SliceDigit, ...]:
    """The digits of the slice index, most significant first: the explicit (distributed)
    indices, then the enclosing ops of the allocation tiling with t > 1 (`dist.outer`, loop
    order). Every digit needs pitch < blockDim (an explicit index over a (0, 1)-loop has pitch 0
    and extent 1); a pitch ≥ blockDim is a CTA-in-cluster axis (each CTA holds its own copy),
    not lowered yet. Rules: COLL-5.11, SEM-8.5"""
    digits = [(n, None, p, e) for n, p, e in zip(dist.iter_names, dist.pitches, dist.extents)]
    for key, iter_name, pitch in dist.outer:
        guard = alloc_tiling.guard_of(key)
        if guard is None or not isinstance(key, ir.Sym):
            raise InternalError(f"{name}: enclosing iterator {iter_name} has no guard", loc)
        digits.append((iter_name, key, pitch, guard.tile_count))
    for iter_name, _, pitch, _ in digits:
        if pitch >= dev.blockDim:
            raise Unsupported(f"codegen of CudaMbarrier {name}: iterator {iter_name} has thread "
                              f"pitch {pitch} ≥ blockDim = {dev.blockDim}, a CTA-in-cluster "
                              "axis (one copy per CTA); only slices within one CTA are "
                              "lowered", loc, code="ERR-V11", rule="COLL-5.11")
    if any(p <= 0 and e > 1 for _, _, p, e in digits):
        raise InternalError(f"{name}: a slice iterator with t > 1 and pitch 0", loc)
    return tuple(SliceDigit(n, key, extent) for n, key, _, extent in digits)


def _slice_index(digits: tuple[SliceDigit, ...], values: list[int]) -> int:
    """Mixed radix, last digit fastest. Rules: COLL-5.11"""
    index = 0
    for d, v in zip(digits, values, strict=True):
        index = index * d.extent + v
    return index


def _label(f: RingFacts, digits: tuple[SliceDigit, ...], values: list[int]) -> str:
    explicit = [v for d, v in zip(digits, values) if d.key is None]
    text = f"{f.sym.name}{explicit}" if explicit else f.sym.name
    outer = [f"{d.name} = {v}" for d, v in zip(digits, values) if d.key is not None]
    return f"{text} ({', '.join(outer)})" if outer else text


def _fixed_collectives(f: RingFacts, dev: CudaDeviceFunction,
                       digits: tuple[SliceDigit, ...]) -> tuple[int, ...]:
    """Per role (Arrive, Await), every statement instance on a slice is executed by the same
    threads, and a thread names one slice: then each thread's own counts are the slice's, and
    per-variable ring state is exact (checked on ground-truth thread sets, COLL-6.1). Returns
    the arrival count of every slice: the size of its Arrive collective. Rules: SEM-8.5,
    COLL-5.11"""
    counts: dict[int, int] = {}
    for role, uses in f.roles.items():
        members: dict[int, frozenset[int]] = {}
        owner: dict[int, tuple[int, str]] = {}
        for tiling, entries, loc in uses:
            guards = tiling.iter_guards()
            for values in product(*(range(g.tile_count) for g in guards)):
                iters = {g.iter_key: v for g, v in zip(guards, values)}
                threads = collectives.thread_set(tiling, iters, dev)
                if not threads:
                    continue
                if any(d.key is not None and d.key not in iters for d in digits):
                    raise InternalError(f"{role} on {f.sym.name} outside its allocation's "
                                        "thread loops", loc)
                digit_values = [iters.get(e, 0) for e in entries] + \
                    [iters[d.key] for d in digits if d.key is not None]
                index = _slice_index(digits, digit_values)
                label = _label(f, digits, digit_values)
                if members.setdefault(index, threads) != threads:
                    raise Unsupported(f"the {role}s on {label} are executed by different "
                                      "thread sets: per-thread ring state would miss phases",
                                      loc, code="ERR-V11", rule="SEM-8.5")
                if role == "Arrive":
                    counts[index] = len(threads)
                for n in threads:
                    if owner.setdefault(n, (index, label))[0] != index:
                        raise Unsupported(f"thread {n} names {owner[n][1]} and {label} in its "
                                          f"{role}s: the ring state is per variable", loc,
                                          code="ERR-V11", rule="SEM-8.5")
    slices = prod(d.extent for d in digits)
    missing = [i for i in range(slices) if i not in counts]
    if missing:
        raise Unsupported(f"no thread arrives on slice {missing[0]} of {f.sym.name} (of "
                          f"{slices}): no arrival count to initialise it with", f.alloc.loc,
                          code="ERR-V11", rule="SEM-8.5")
    return tuple(counts[i] for i in range(slices))


def plan_rings(facts: dict[ir.Sym, RingFacts], dev: CudaDeviceFunction,
               smem_top: int) -> tuple[dict[ir.Sym, MbarrierRing], int]:
    """Depth, count and a fixed 8-byte-aligned SMEM offset (after every other allocation, so
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
        cp_async = [not implements(t, SyncTL.cuda_in_order) for t in f.firsts]
        if len(set(cp_async)) != 1:
            raise Unsupported(f"the Arrives on {sym.name} mix cp.async (noinc) and in-order "
                              "sync-tls", f.alloc.loc, code="ERR-V11", rule="SEM-8.5")
        digits = slice_digits(sym.name, f.tiling, _distribution(f, dev), dev, f.alloc.loc)
        counts = _fixed_collectives(f, dev, digits)
        ring = MbarrierRing(sym, digits, depth, lags[sym], counts, top, cp_async[0])
        rings[sym] = ring
        top += ring.nbytes
    return rings, top


# ------------------------------------------------------------------ text


def _u(n: int) -> str:
    return f"{n}u"


def _base(ring: MbarrierRing) -> str:
    return f"static_cast<uint32_t>(__cvta_generic_to_shared(exo_smem + {ring.offset}))"


def _asm(text: str, operands: str) -> str:
    return f'asm volatile("{text}" :: {operands} : "memory");'


def state_fields(rings: dict[ir.Sym, MbarrierRing], cname: dict[ir.Sym, str]) -> list[str]:
    """Members of `exo_SyncState`, all zero-initialised. Rules: SEM-8.5"""
    out = []
    for sym, ring in rings.items():
        name = cname[sym]
        out += [f"uint32_t {name}_arriveIdx = 0;  // {sym.name}: ring depth {ring.depth}",
                f"uint32_t {name}_awaitIdx = 0;",
                f"uint32_t {name}_parity = 0;  // one bit per ring slot"]
        if ring.lag:
            out.append(f"uint32_t {name}_skips = 0;  // trivial awaits taken, up to {ring.lag}")
    return out


def uses_async_proxy(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Whether a sync statement involves an async-proxy qual-tl (fence after init)."""
    for s in stmts:
        tls: list[SyncTL] = []
        match s:
            case ir.Fence(first=a, second=b):
                tls = [a, b]
            case ir.Arrive(first=a):
                tls = [a]
            case ir.Await(second=b):
                tls = [b]
        if any(SYNC_SETS[t].full & ASYNC_PROXY_QUALS for t in tls):
            return True
        for child in ("body", "orelse"):
            if uses_async_proxy(getattr(s, child, ())):
                return True
    return False


def setup_lines(rings: dict[ir.Sym, MbarrierRing], proxy: bool) -> list[str]:
    """`exo_deviceSetup`: thread 0 initialises every ring slot with the arrival count;
    [fence.proxy.async]; CTA barrier. Rules: SEM-8.5"""
    out = ["if (threadIdx.x == 0) {"]
    for sym, ring in rings.items():
        counts = sorted(set(ring.counts))
        shown = f"arrival count {counts[0]}" if len(counts) == 1 else \
            f"arrival counts {list(ring.counts)} per slice"
        out.append(f"    // {sym.name}: {ring.slices} x ring of depth {ring.depth} at exo_smem + "
                   f"{ring.offset}, {shown}")
        if ring.slices > 1:
            out.append("    // slice index (mixed radix, last fastest): " +
                       ", ".join(f"{d.name} < {d.extent}" for d in ring.digits))
        first = 0
        while first < ring.slices:  # one loop per run of slices with the same count
            last = first
            while last + 1 < ring.slices and ring.counts[last + 1] == ring.counts[first]:
                last += 1
            lo, hi = first * ring.depth, (last + 1) * ring.depth
            start = f"exo_i = {_u(lo)}" if lo else "exo_i = 0"
            out += [f"    for (uint32_t {start}; exo_i < {_u(hi)}; exo_i++) {{",
                    "        " + _asm("mbarrier.init.shared::cta.b64 [%0], %1;",
                                      f'"r"({_base(ring)} + 8u * exo_i), '
                                      f'"r"({_u(ring.counts[first])})'),
                    "    }"]
            first = last + 1
    out.append("}")
    if proxy:
        out += PROXY_FENCE
    return out + ['asm volatile("barrier.cta.sync 0;" ::: "memory");']


def index_digits(ring: MbarrierRing, explicit: list[str], ctrl: dict[ir.Sym, str],
                 loc: SrcLoc | None = None) -> list[str]:
    """C text of the slice digits at a use: the explicit indices, then the C names of the
    enclosing iterators of the allocation. Rules: COLL-5.11"""
    out = list(explicit)
    for d in ring.digits:
        if d.key is None:
            continue
        if d.key not in ctrl:
            raise InternalError(f"{ring.sym.name}: iterator {d.name} not in scope", loc)
        out.append(ctrl[d.key])
    if len(out) != len(ring.digits):
        raise InternalError(f"{ring.sym.name}: {len(out)} of {len(ring.digits)} slice digits",
                            loc)
    return out


def _slot(ring: MbarrierRing, idx: list[str], pos: str) -> str:
    """Shared address of ring slot `pos` of the slice whose digits are `idx` (mixed radix,
    last fastest). Rules: COLL-5.11, SEM-8.5"""
    strides = dense_strides([str(d.extent) for d in ring.digits])
    sl = c_add([c_mul(i, st) for i, st in zip(idx, strides, strict=True)])
    slot = pos if sl == "0" else f"{c_mul(sl, str(ring.depth))} + {pos}"
    return f"{_base(ring)} + 8u * ({slot})"


def arrive_lines(ring: MbarrierRing, cname: str, idx: list[str]) -> list[str]:
    """Arrive on slot ArriveIdx (noinc cp.async arrive for τ1 ⊑ Sm80_cp_async), then advance
    ArriveIdx mod depth. Rules: SEM-8.5"""
    pos = f"{STATE}.{cname}_arriveIdx"
    text = ("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" if ring.cp_async else
            "mbarrier.arrive.shared::cta.b64 _, [%0];")
    return [_asm(text, f'"r"({_slot(ring, idx, pos)})'),
            f"{pos} = ({pos} + 1u) % {_u(ring.depth)};"]


def await_lines(ring: MbarrierRing, cname: str, idx: list[str], proxy: bool,
                loc: SrcLoc | None) -> list[str]:
    """Skips < lag: a trivial await. Otherwise wait for the parity bit of slot AwaitIdx, flip
    it, advance AwaitIdx mod depth, [fence.proxy.async]. Rules: SEM-8.5"""
    if ring.depth <= 0:
        raise InternalError(f"{ring.sym.name}: ring depth {ring.depth}", loc)
    st = f"{STATE}.{cname}"
    body = ["const uint32_t exo_slot = " + f"{st}_awaitIdx;",
            f"exo_mbarrierWait({_slot(ring, idx, 'exo_slot')}, ({st}_parity >> exo_slot) & 1u);",
            f"{st}_parity ^= 1u << exo_slot;",
            f"{st}_awaitIdx = (exo_slot + 1u) % {_u(ring.depth)};"]
    if proxy:
        body += PROXY_FENCE
    if not ring.lag:
        return ["{"] + ["    " + line for line in body] + ["}"]
    return ([f"if ({st}_skips < {_u(ring.lag)}) {{", f"    {st}_skips++;", "} else {"]
            + ["    " + line for line in body] + ["}"])
