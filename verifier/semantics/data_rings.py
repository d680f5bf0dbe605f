"""Endgame's managed ring buffers of data in the concrete machine (specs/dialects.md DIAL-18).

`x: T[..., n @ ring_buffer_by(D), ...].ring_guarded_by(g)` has n logical elements along its
ring dimension in D physical slots. The machine keeps x's histories per *slot* (the ring index
mod D), so two logical elements sharing a slot are one element for every hazard check: slot
reuse is an ordinary race. Beside it a *shadow* of x's logical shape holds the handoff of every
element y: a write at the allocation seen by nobody (qual-tl `slot`), pending on arrive #0 of
g[y] (or of any element of g's multicast group), read by every access of x[y] (upstream's
`alloc_on_await`: an access before an Await on g[y] is `use_before_alloc`). The encoder reads
the same sites (verifier/check/static_data_rings.py). Non-goals: lowering.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import CudaMbarrier
from verifier.semantics import rules
from verifier.semantics.rules import AccessKind
from verifier.semantics.threads import Threads

Box = tuple[tuple[int, int], ...]


def multicast_dims(body: tuple[ir.Stmt, ...], guard: ir.Sym) -> frozenset[int]:
    """The guard's dimensions some Arrive multicasts along (an interval in a target): an Await
    on any element of such a group hands over the slot (upstream's `barrier_multicasts`)."""
    out: set[int] = set()
    stack = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, ir.Arrive):
            for t in s.targets:
                if t.buf is guard:
                    out |= {k for k, a in enumerate(t.idx) if isinstance(a, ir.Interval)}
        stack.extend(getattr(s, "body", ()))
        stack.extend(getattr(s, "orelse", ()))
    return frozenset(out)


@dataclass
class DataRingInstance:
    """One allocation of a data ring: its ring dimension, logical shape and shadow buffer."""

    ring: ir.RingDim
    logical: tuple[int, ...]
    shadow: Any  # a histories.BufInstance of the logical shape


def physical_shape(typ: ir.Tensor, shape: tuple[int, ...]) -> tuple[int, ...]:
    assert typ.ring is not None
    r = typ.ring.dim
    return shape[:r] + (typ.ring.depth,) + shape[r + 1:]


def start(m: Any, typ: ir.Tensor, dr: DataRingInstance, task: int | None, loc: SrcLoc) -> None:
    """The handoff of every element y: the shadow's slice at g's index (y among them) is
    written by nobody, pending on arrive #0 of g[y]'s multicast group."""
    assert typ.ring_guard is not None
    bar = m.barriers[typ.ring_guard]
    group = multicast_dims(m.proc.body, typ.ring_guard)
    k = len(bar.shape)
    entry = rules.SLOT_ENTRY
    quals, qbits = m.qual_codes(entry)
    for prefix in itertools.product(*(range(n) for n in dr.logical[:k])):
        ranges = [range(n) if j in group else (prefix[j],) for j, n in enumerate(bar.shape)]
        tags = frozenset((bar.serial, e, 0) for e in itertools.product(*ranges))
        box = tuple((i, i + 1) for i in prefix) + tuple((0, n) for n in dr.logical[k:])
        m.check_and_record(dr.shadow, box, AccessKind.write, entry, quals, qbits, False, True,
                           Threads(task, 0), loc, frozenset(), tags)


def to_slot(dr: DataRingInstance, box: Box) -> Box | None:
    """The box's physical slots; None when it spans several ring indices (outside the
    fragment: the static analysis reports it unsupported first)."""
    r = dr.ring.dim
    lo, hi = box[r]
    if hi - lo != 1:
        return None
    return box[:r] + ((lo % dr.ring.depth, lo % dr.ring.depth + 1),) + box[r + 1:]


def complete_at_free(body: tuple[ir.Stmt, ...]) -> frozenset[ir.Sym]:
    """DIAL-20: the data rings whose end-of-scope free needs every access *complete* (ordered,
    on the in-order qual-tls, before some thread of the freeing cluster) instead of seen by
    every thread (SEM-4.7): those allocated in the same block as their guard. Each instance of
    such a ring then begins after its guard's allocation, which the lowering opens with a
    CTA (cluster) barrier of every thread (DIAL-13), and its space is no other allocation's
    (DIAL-18 part 3), so a complete access is ordered before every later use of its bytes.
    Not in a kernel of clusterDim > 1 without its exit barrier (`unsafe_no_shutdown_cluster_
    sync`, CG-X1): a peer's in-order remote arrive, complete for its own thread, could still
    reach a CTA that has exited. Read by the machine's free and by the encoder's free sites."""
    out: set[ir.Sym] = set()
    stack = [body]
    while stack:
        block = stack.pop()
        allocated: set[ir.Sym] = set()
        for s in block:
            if isinstance(s, ir.DeviceFunction) and s.cfg.clusterDim > 1 and \
                    s.cfg.unsafe_no_shutdown_cluster_sync:
                continue
            if isinstance(s, ir.Alloc):
                typ = s.typ
                if isinstance(typ, ir.Tensor) and typ.ring is not None and \
                        typ.ring_guard in allocated:
                    out.add(s.name)
                elif isinstance(typ, ir.BarrierType) and typ.ring is not None and \
                        typ.mech is CudaMbarrier:
                    out.add(s.name)
                allocated.add(s.name)
            for sub in ("body", "orelse"):
                inner = getattr(s, sub, None)
                if isinstance(inner, tuple) and inner:
                    stack.append(inner)
    return frozenset(out)
