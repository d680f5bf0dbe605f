"""CUDA for the endgame dialect's managed ring mbarriers (specs/dialects.md DIAL-13).

Reads the uses of one `z: barrier[..., n @ ring_buffer_by(D), ...] @ CudaMbarrierPreArrive(p)`
collected by the plan; produces the ring (an `MbarrierRing` of depth D, one slice per element
of the dimensions that are neither the ring nor a CTA-in-cluster axis), its initialisation at
each allocation instance, and the text of Arrive/Await. Logical element y (ring index) lives in
slot (y - p) mod D, phase (y - p) / D of that slot; an Await on y < p waits for nothing. No
per-thread state: the slot and parity are the element's. Each allocation instance starts from
freshly initialised mbarriers (a CTA or cluster barrier, thread 0 initialises, then a CTA or
cluster barrier): the first barrier (in-order rings) or the SEM-4.7 free check of the previous
instance (rings with asynchronous arrives, DIAL-12) orders every access of its slots before the
re-initialisation, and DIAL-6, 7, 10, 11 make every slot's phases complete in ring order.
A TMA with a trailing `>> z[y]` posts its bytes on y's slot (TMA-CG-2).
Non-goals: rings allocated below task scope, cp.async multicast (`Unsupported`, ERR-V11).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from verifier import collectives
from verifier.codegen.mbarrier import (
    MBARRIER_BYTES, MbarrierRing, RingFacts, SliceDigit, all_threads, rank_deltas, slice_digits,
)
from verifier.codegen.mbarrier_text import (
    PROXY_FENCE, asm_line, block_barrier, setup_lines, slot_address, u32,
)
from verifier.collectives import Tiling
from verifier.diagnostics import InternalError, SporkError, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.config import CudaDeviceFunction
from verifier.lang.stdlib.timelines import SyncTL, implements
from verifier.lang.stdlib.units import cuda_cta_in_cluster


@dataclass(frozen=True, slots=True)
class IndexedRing:
    """A ring mbarrier as lowered: the ring of slots, which index is the ring's, p, and which
    explicit indices are local slice digits (the others are CTA axes or the ring)."""

    ring: MbarrierRing
    ring_dim: int
    pre_arrive: int
    local: tuple[int, ...]  # explicit index positions of the per-CTA slice digits


def plan_indexed(facts: dict[ir.Sym, RingFacts], dev: CudaDeviceFunction, top_tiling: Tiling,
                 smem_top: int) -> tuple[dict[ir.Sym, IndexedRing], int]:
    """One `IndexedRing` per endgame ring mbarrier with a fixed 8-byte-aligned SMEM offset
    after `smem_top`; returns them and the new SMEM extent. Rules: DIAL-13, COLL-5.11"""
    top = -(-smem_top // MBARRIER_BYTES) * MBARRIER_BYTES
    out: dict[ir.Sym, IndexedRing] = {}
    for sym, f in facts.items():
        typ = f.alloc.typ
        assert isinstance(typ, ir.BarrierType) and typ.ring is not None
        if f.tiling.box != top_tiling.box or f.tiling.box_threads != top_tiling.box_threads:
            raise Unsupported(f"codegen of ring mbarrier {sym.name} allocated below task scope "
                              "(its initialisation needs every thread of the CTA)", f.alloc.loc,
                              code="ERR-V11", rule="DIAL-13")
        ring_dim, depth = typ.ring.dim, typ.ring.depth
        extents = [_const(d, f) for k, d in enumerate(typ.shape) if k != ring_dim]
        positions = [k for k in range(len(typ.shape)) if k != ring_dim]
        uses = [(t, tuple(e for k, e in enumerate(entries) if k != ring_dim))
                for side in ("Arrive", "Await") for t, entries, _ in f.roles[side]]
        try:
            dist = collectives.deduce_distribution(f.tiling, cuda_cta_in_cluster, uses, extents,
                                                   dev, name=sym.name)
        except SporkError as err:
            if err.loc.line == 0:
                err.loc = f.alloc.loc
            raise
        _, ctas = slice_digits(sym.name, f.tiling, dist, dev, f.alloc.loc)
        ctas = tuple(type(c)(c.name, c.key, positions[c.position] if c.position is not None
                             else None, c.extent, c.stride) for c in ctas)
        cta_pos = {c.position for c in ctas if c.position is not None}
        local = tuple(k for k in positions if k not in cta_pos)
        # an extent-1 digit names the same slot whatever the index (an interval included)
        _check_trailing(f, dev, (ring_dim, *(k for k in local if _const(typ.shape[k], f) > 1)))
        digits = tuple(SliceDigit(f"i{k}", None, _const(typ.shape[k], f)) for k in local)
        deltas = rank_deltas(_without_ring(f, ring_dim), ctas)
        cp_async = {not implements(t, SyncTL.cuda_in_order) for t in f.firsts}
        if len(cp_async) != 1:
            raise Unsupported(f"the Arrives on {sym.name} mix cp.async (noinc) and in-order "
                              "sync-tls", f.alloc.loc, code="ERR-V11", rule="DIAL-13")
        noinc = cp_async.pop()
        if noinc and deltas != (0,):
            raise Unsupported(f"{sym.name}: a cp.async (noinc) arrive cannot be multicast",
                              f.alloc.loc, code="ERR-V11", rule="DIAL-13")
        counts = {t.box_threads * len(deltas) for t, _, _ in f.roles["Arrive"]}
        if len(counts) != 1:
            raise InternalError(f"{sym.name}: arrival counts {sorted(counts)} (DIAL-5 missed)",
                                f.alloc.loc)
        count = counts.pop()
        slices = prod(d.extent for d in digits)
        ring = MbarrierRing(sym, digits, depth, 0, (count,) * slices, top, noinc, ctas, deltas,
                            dev.clusterDim > 1)
        out[sym] = IndexedRing(ring, ring_dim, typ.pre_arrive, local)
        top += ring.nbytes
    return out, top


def _check_trailing(f: RingFacts, dev: CudaDeviceFunction, keep: tuple[int, ...]) -> None:
    """A TMA completing on element y posts its bytes on its own CTA's slot of y before that
    phase can complete: every issuing thread arrives on y itself, after the TMA (a later Arrive
    run by a superset of the issuing threads whose home element has the same ring index and
    per-CTA slice digits of extent > 1, positions `keep`; the CTA digits name each thread's own
    CTA), so the phase is still pending when the bytes are expected. Rules: TMA-CG-2, SEM-8.6"""
    for tiling, entries, loc in f.trailing:
        issuers = all_threads(tiling, dev)
        if not any((at.line, at.col) > (loc.line, loc.col) and
                   all(home[k] == entries[k] for k in keep) and issuers <= all_threads(t, dev)
                   for t, home, at in f.roles["Arrive"]):
            raise Unsupported(f"a TMA completing on {f.sym.name} whose issuing threads do not "
                              "then arrive on the same element: its expected bytes could land "
                              "after the phase completed", loc, code="ERR-V11", rule="TMA-CG-2")


def trailing_slot(r: IndexedRing, idx: list[str], index: str) -> str:
    """The shared address of the slot of element `index`, where a TMA posts its bytes.
    Rules: TMA-CG-2"""
    return slot_address(r.ring, idx, _position(r, index))


def _const(d: ir.Expr, f: RingFacts) -> int:
    if not (isinstance(d, ir.Const) and isinstance(d.value, int)):
        raise InternalError(f"{f.sym.name}: non-constant extent off the ring dimension",
                            f.alloc.loc)
    return d.value


def _without_ring(f: RingFacts, ring_dim: int) -> RingFacts:
    """The facts with the ring dimension dropped from every multicast mask (never one)."""
    masks = [(tuple(m[:ring_dim] + m[ring_dim + 1:] for m in ms), loc) for ms, loc in f.masks]
    typ = f.alloc.typ
    assert isinstance(typ, ir.BarrierType)
    shape = typ.shape[:ring_dim] + typ.shape[ring_dim + 1:]
    alloc = ir.Alloc(f.alloc.name, ir.BarrierType(shape, typ.mech), typ.mech, f.alloc.loc)
    return RingFacts(alloc, f.tiling, masks=masks)


def init_lines(r: IndexedRing, proxy: bool) -> list[str]:
    """At each allocation instance: a CTA (cluster) barrier first, so that every thread (and
    every peer CTA's remote arrive) is done with the previous instance's slots before they are
    re-initialised (DIAL-12 exempts in-order rings from the free check on that ground), then
    thread 0 initialises every slot with the arrival count and the CTA (cluster) barrier
    publishes them. Rules: DIAL-12, DIAL-13, SEM-8.5"""
    return block_barrier(r.ring.cluster) + setup_lines({r.ring.sym: r.ring}, proxy)


def _position(r: IndexedRing, index: str) -> str:
    return f"(static_cast<uint32_t>(({index}) - {r.pre_arrive}) % {u32(r.ring.depth)})"


def arrive_lines(r: IndexedRing, idx: list[str], index: str, cluster_dim: int) -> list[str]:
    """Arrive on the slot of element `index`: in this CTA (noinc for τ1 ⊑ Sm80_cp_async), and
    through `mapa` in the CTAs of rank own ^ delta of a multicast. Rules: DIAL-13, SEM-8.5"""
    slot = slot_address(r.ring, idx, _position(r, index))
    if r.ring.cp_async:
        return [asm_line("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];", f'"r"({slot})')]
    if r.ring.rank_deltas == (0,):
        return [asm_line("mbarrier.arrive.shared::cta.b64 _, [%0];", f'"r"({slot})')]
    out = ["{", f"    const uint32_t exo_bar = {slot};",
           f"    const uint32_t exo_rank = blockIdx.x % {u32(cluster_dim)};"]
    for delta in r.ring.rank_deltas:
        if delta == 0:
            out.append("    " + asm_line("mbarrier.arrive.shared::cta.b64 _, [%0];", '"r"(exo_bar)'))
        else:
            out.append(f"    exo_mbarrierArriveRemote(exo_bar, exo_rank ^ {u32(delta)});")
    return out + ["}"]


def await_lines(r: IndexedRing, idx: list[str], index: str, proxy: bool) -> list[str]:
    """Wait for phase (y - p) / D of slot (y - p) mod D, by its parity; nothing for y < p.
    Rules: DIAL-13, SEM-8.5"""
    wait = "exo_mbarrierWaitCluster" if r.ring.cluster else "exo_mbarrierWait"
    depth = u32(r.ring.depth)
    body = [f"const uint32_t exo_y = static_cast<uint32_t>(({index}) - {r.pre_arrive});",
            f"{wait}({slot_address(r.ring, idx, f'(exo_y % {depth})')}, (exo_y / {depth}) & 1u);"]
    if proxy:
        body += PROXY_FENCE
    head = f"if (({index}) >= {r.pre_arrive}) {{" if r.pre_arrive else "{"
    return [head] + ["    " + line for line in body] + ["}"]
