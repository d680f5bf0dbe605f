"""Endgame ring barriers in the concrete machine (specs/dialects.md DIAL-3, 4, 6, 7, 10, 15).

An endgame mbarrier `z: barrier[..., n @ ring_buffer_by(d)] @ CudaMbarrierPreArrive(p)` has one
one-shot element per logical index: elements with ring index < p start complete (arrive #0 is
the pre-arrive), every other one completes with its single Arrive, and every Await on an
element pairs with that arrive #0. Logical y and y - d share a physical slot: at the
allocation, y's storage gets a *handoff* record (qual-tl `slot`, seen by nobody) tagged with
arrive #0 of y - d, so only an Await on y - d orders it before the accesses of y; an Arrive on
y writes the storage of y - d (the slot's *recycling*), so every access of y - d must be
temporally ordered before it. At the free every slot must have been recycled: each element
y ≥ d arrived on (DIAL-16, upstream's `free_missing_arrive`).
Non-goals: physical slots and parities (codegen).
"""

from __future__ import annotations

import itertools
from typing import Protocol

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import CudaMbarrier
from verifier.lang.stdlib.timelines import QualTL, SyncTL, implements
from verifier.semantics import rules
from verifier.semantics.access import walk_stmts
from verifier.semantics.machine_view import MachineView
from verifier.semantics.rings import multicast_mask
from verifier.semantics.state import Finding
from verifier.semantics.threads import Threads


class RingBarrier(Protocol):
    """What these rules read of a `barriers.BarrierInstance` (no import of `barriers`)."""

    sym: ir.Sym
    shape: tuple[int, ...]
    counts: dict[tuple[int, ...], list[int]]
    serial: int
    ring: ir.RingDim | None
    pre_arrive: int


def start(m: MachineView, bar: RingBarrier, task: int | None, loc: SrcLoc) -> None:
    """DIAL-3 pre-arrived elements; DIAL-6 the handoff of every slot y ≥ depth."""
    assert bar.ring is not None
    r, depth = bar.ring.dim, bar.ring.depth
    for elem in itertools.product(*(range(n) for n in bar.shape)):
        if elem[r] < bar.pre_arrive:
            bar.counts[elem] = [1, 0]
        if elem[r] >= depth:
            before = elem[:r] + (elem[r] - depth,) + elem[r + 1:]
            m.storage_write(bar.sym, elem, Threads(task, 0), loc, rules.SLOT_ENTRY,
                            frozenset({(bar.serial, before, 0)}))


def arrive(m: MachineView, s: ir.Arrive, threads: Threads, bar: RingBarrier,
           home: tuple[int, ...], named: list[tuple[int, ...]], number: int, sm80: bool) -> None:
    """DIAL-10: a one-shot element takes one Arrive, never on a pre-arrived one; DIAL-7: the
    Arrive on y recycles the slot of y - depth (a write of its storage)."""
    assert bar.ring is not None
    r, depth = bar.ring.dim, bar.ring.depth
    if number > 0:
        why = f"the element is pre-arrived (ring index {home[r]} < {bar.pre_arrive})" \
            if home[r] < bar.pre_arrive else f"this is arrive #{number} on it"
        m.report(Finding(
            "barrier-count", f"SECOND ARRIVE @ {bar.sym.name}{list(home)}: a ring mbarrier "
            f"element completes with one Arrive; {why}", bar.sym.name, home, s.loc,
            m.origin(s.loc, "arrive", threads), None, rule="DIAL-10", code="ERR-V15",
            sync_hint="give each Arrive its own ring index (e.g. `>> z[..., n + p]` with "
                      "`CudaMbarrierPreArrive(p)`)"))
    q0 = QualTL.Sm80 if sm80 else QualTL.cuda2
    entry = rules.QualEntry(q0, frozenset({q0, QualTL.cuda2}))
    for elem in named:
        if elem[r] >= depth:
            m.storage_write(bar.sym, elem[:r] + (elem[r] - depth,) + elem[r + 1:], threads,
                            s.loc, entry, frozenset(), recycle=True)


def trailing(m: MachineView, s: ir.Call, threads: Threads, bar: RingBarrier,
             named: list[tuple[int, ...]]) -> None:
    """DIAL-10: an instr's trailing barrier is part of its element's one arrival, so it may not
    name a ring element that already had its Arrive (or is pre-arrived): upstream's "Cannot use
    this barrier as trailing barrier after previous Arrive"."""
    if bar.ring is None:
        return
    for elem in named:
        if bar.counts.get(elem, (0, 0))[0] > 0:
            m.report(Finding(
                "barrier-count", f"Cannot use this barrier as trailing barrier after previous "
                f"Arrive @ {bar.sym.name}{list(elem)}", bar.sym.name, elem, s.loc,
                m.origin(s.loc, "arrive", threads), None, rule="DIAL-10", code="ERR-V15",
                sync_hint=f"issue the instr before the Arrive on {bar.sym.name}"
                          f"{list(elem)} (the Arrive completes the element)"))
            return


def a_max(bar: RingBarrier) -> int:
    """DIAL-4: every Await on a ring element pairs with its arrive #0."""
    return 0


def free(m: MachineView, bar: RingBarrier, loc: SrcLoc) -> None:
    """DIAL-16: at the ring's free every element y ≥ depth has had its Arrive, the one that
    recycles (frees) the slot of y - depth; the first element whose slot was never recycled is
    reported, named as upstream names it (the element freed without its arrive)."""
    assert bar.ring is not None
    r, depth = bar.ring.dim, bar.ring.depth
    for elem in itertools.product(*(range(n) for n in bar.shape)):
        if elem[r] < depth or bar.counts.get(elem, (0, 0))[0] > 0:
            continue
        freed = elem[:r] + (elem[r] - depth,) + elem[r + 1:]
        m.report(Finding(
            "barrier-count", f"free_missing_arrive HAZARD @ free({bar.sym.name}{list(freed)}): "
            f"its slot is never recycled, {bar.sym.name}{list(elem)} is never arrived on",
            bar.sym.name, freed, loc, None, None, rule="DIAL-16", code="ERR-V16",
            sync_hint=f"arrive on every element of {bar.sym.name} with ring index >= {depth} "
                      "before the end of its scope (e.g. the consumer's final Arrive after the "
                      "main loop)"))
        return


def synchronous_rings(proc: ir.Proc) -> frozenset[ir.Sym]:
    """DIAL-12: the endgame ring mbarriers whose storage free is not checked (SEM-4.7): every
    Arrive on them is in order (τ1 ⊑ cuda_in_order, complete when its threads pass it) and none
    is a TMA trailing barrier. The certified lowering orders such a ring's previous instance
    before each re-initialisation by a CTA (cluster) barrier of its own (DIAL-13), so the free,
    which only models that re-initialisation, needs no synchronization from the program; a ring
    with an asynchronous arrive (cp.async noinc, TMA) keeps the check. DIAL-21: so does a ring
    some Arrive multicasts on in a kernel of clusterDim > 1 without its exit cluster barrier
    (`unsafe_no_shutdown_cluster_sync`, CG-X1): the last instance's remote arrives are ordered
    before the peer CTA's exit only by the program's own synchronization."""
    rings = {s.name for s in walk_stmts(proc.body) if isinstance(s, ir.Alloc)
             and isinstance(s.typ, ir.BarrierType) and s.typ.ring is not None
             and s.typ.mech is CudaMbarrier}
    for s in walk_stmts(proc.body):
        if isinstance(s, ir.Arrive) and not implements(s.first, SyncTL.cuda_in_order):
            rings -= {t.buf for t in s.targets}
        elif isinstance(s, ir.Call):
            rings -= {t.buf for t in s.trailing}
        elif isinstance(s, ir.DeviceFunction) and s.cfg.clusterDim > 1 and \
                s.cfg.unsafe_no_shutdown_cluster_sync:
            rings -= multicast_rings(s.body)
    return frozenset(rings)


def multicast_rings(body: tuple[ir.Stmt, ...]) -> frozenset[ir.Sym]:
    """DIAL-21: the barriers some Arrive in `body` multicasts on (an interval over a dimension
    of extent other than 1, LANG-5.7: another CTA's element, LANG-5.13). A symbolic extent
    counts as multicast."""
    shapes = {s.name: tuple(d.value if isinstance(d, ir.Const) else 0 for d in s.typ.shape)
              for s in walk_stmts(body)
              if isinstance(s, ir.Alloc) and isinstance(s.typ, ir.BarrierType)}
    return frozenset(t.buf for s in walk_stmts(body) if isinstance(s, ir.Arrive)
                     for t in s.targets if t.buf in shapes
                     and any(multicast_mask(t, shapes[t.buf])))
