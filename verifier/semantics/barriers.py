"""Split barriers in the concrete machine: counters, pending awaits, pairing (SEM-2.3, SEM-6).

Commit groups, mbarriers and cluster syncs share one mechanism: an Arrive tags the records it
witnesses with (barrier element, arrive number); an Await retires the tags its counter allows
and augments those records. Mbarrier storage is a tracked SMEM variable read by every Arrive
and Await (SEM-6.2), so its free is checked like any SMEM free (SEM-4.7).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import CudaMbarrier
from verifier.semantics import ring_slots, rules
from verifier.semantics.records import augment_key
from verifier.semantics.state import Finding
from verifier.semantics.threads import Threads
from verifier.semantics.machine_view import MachineView

_SERIALS = itertools.count()


@dataclass
class BarrierInstance:
    sym: ir.Sym
    shape: tuple[int, ...]
    mech: object
    counts: dict[tuple[int, ...], list[int]] = field(default_factory=dict)  # element -> [a, w]
    serial: int = field(default_factory=lambda: next(_SERIALS))  # one per allocation instance
    ring: ir.RingDim | None = None  # an endgame ring of one-shot elements (ring_slots)
    pre_arrive: int = 0
    balanced: bool = True  # SEM-6.6 applies (February's rule; not endgame's, DIAL-12)

    def count(self, element: tuple[int, ...]) -> list[int]:
        return self.counts.setdefault(element, [0, 0])

    def elements(self) -> list[tuple[int, ...]]:
        return [tuple(e) for e in itertools.product(*(range(n) for n in self.shape))]


def referenced(ref: ir.BarrierRef, bar: BarrierInstance, value: Callable[[ir.Expr], int]
               ) -> tuple[tuple[int | None, ...], list[tuple[int, ...]]]:
    """(home entries with None for intervals, every element the expression names)."""
    home: list[int | None] = []
    ranges = []
    for k, a in enumerate(ref.idx):
        if isinstance(a, ir.Point):
            v = value(a.pt)
            home.append(v)
            ranges.append(range(v, v + 1))
        else:
            home.append(None)
            ranges.append(range(bar.shape[k]))
    return tuple(home), [tuple(e) for e in itertools.product(*ranges)]


def arrive(m: MachineView, s: ir.Arrive, threads: Threads, bar: BarrierInstance,
           each: bool = False) -> None:
    """SEM-6.3 (with the storage reads of SEM-6.2); `each`: BW-5.5, a tcgen05.commit on behalf
    of other CTAs that multicasts is one arrival at every element it names, each numbered and
    counted at that element (other Arrives count at their home only)."""
    homes: list[tuple[int | None, ...]] = []
    named: list[tuple[int, ...]] = []
    groups: list[list[tuple[int, ...]]] = []
    for ref in s.targets:
        home, elems = referenced(ref, bar, m.value)
        homes.append(home)
        groups.append(elems)
        named.extend(e for e in elems if e not in named)
    home_elem = tuple(next((h[k] for h in homes if h[k] is not None), 0)
                      for k in range(len(bar.shape)))
    first = rules.SYNC_SETS[s.first]
    if bar.mech is CudaMbarrier:
        # SEM-6.2: the arrive's read of the storage of each element a target names is
        # released by the arrive itself, whatever its first sync-tl witnesses: tagged with
        # that target's elements as a trailing barrier tags (SEM-4.4 P0, SEM-6.5)
        for elems in groups:
            own = frozenset((bar.serial, e, bar.count(e)[0]) for e in elems)
            for elem in elems:
                m.storage_access(bar.sym, elem, threads, s.loc,
                                 sm80=rules.Q.Sm80 in first.full, conv=bar.ring is None,
                                 tags=own)
    a = bar.count(home_elem)[0]
    code = m.sync_code(first)
    # (z, j, c) names the allocation instance of z: a barrier re-allocated by a later task or
    # iteration restarts its counts at 0 (SEM-2.3) and must not retire the tags of the old one
    tags = [(bar.serial, elem, bar.count(elem)[0] if each else a) for elem in named]
    held = [((z, e), n) for z, e, n in tags]
    skip = not m.exact_families
    for co in m.index.witness_candidates(threads, code):
        if skip:
            pending = co.pending
            for key, n in held:
                got = pending.get(key)
                if got is None or got > n:
                    break
            else:
                continue  # every tag already held: no change but perhaps a neutral family split
        target = m.witnessed_part(co, threads, code)
        if target is not None:
            # a cohort already tagged on an element is already in that element's index list
            # (tags are never removed): listed once, an Await visits it once
            fresh = [e for e in named if (bar.serial, e) not in target.pending]
            target.tag(tags)
            if fresh:
                m.index.tag(target, bar.serial, fresh)
    counted = named if each else [home_elem]
    for elem in counted:
        bar.count(elem)[0] += 1
    if bar.ring is not None:
        m.await_log.arrive(s, m.env, [(bar.serial, e) for e in counted])  # DIAL-11
        ring_slots.arrive(m, s, threads, bar, home_elem, named, a,
                          rules.Q.Sm80 in first.full)
    elif bar.mech is CudaMbarrier:
        _ring_check(m, s, threads, bar, home_elem, named, a)


def _ring_check(m: MachineView, s: ir.Arrive, threads: Threads, bar: BarrierInstance,
                home: tuple[int, ...], named: list[tuple[int, ...]], number: int) -> None:
    """SEM-6.8: arrive #(n + d) with home h reuses the slot of every element b it names (the
    multicast arrives land in each b's ring), so the n-th non-trivial Await on each such b must
    be earlier in the completion order (the parity lowering, SEM-8.5)."""
    clock = m.order.arrive(threads, (bar.serial, home), number)
    depth = m.rings.depth.get(bar.sym)
    if depth is None:
        return
    n = number - depth
    for elem in [home] + [e for e in named if e != home]:
        if n >= 0 and clock.get((bar.serial, elem), -1) < n:
            remote = "" if elem == home else (
                f"; it reaches {bar.sym.name}{list(elem)} as a remote arrive of its own, and a "
                f"peer's arrive #{n} there may still be in flight, so this one could complete "
                f"phase #{n} in its place (stricter than upstream's sync_check, which does not "
                "check this: specs/verification.md, SEM-6.8 multicast)")
            m.report(Finding(
                "ring-overrun", f"mbarrier ring overrun @ {bar.sym.name}{list(elem)}: arrive "
                f"#{number} (home {bar.sym.name}{list(home)}) reuses the slot of arrive #{n} "
                f"(ring depth {depth}), but the non-trivial await #{n} on "
                f"{bar.sym.name}{list(elem)} is not ordered before it{remote}", bar.sym.name,
                elem, s.loc,
                m.origin(s.loc, "arrive", threads), None,
                sync_hint="order the Await that releases the slot before this Arrive (guard the "
                          "barrier with its partner, LANG-5.16; a multicast guard must reach "
                          "every CTA this Arrive reaches)"))
            return


def await_(m: MachineView, s: ir.Await, threads: Threads, bar: BarrierInstance) -> None:
    """SEM-6.4, with the unsatisfiable-await check of SEM-6.7 (D5)."""
    _, (elem,) = referenced(s.target, bar, m.value)
    if bar.mech is CudaMbarrier:
        m.storage_access(bar.sym, elem, threads, s.loc, sm80=False, conv=bar.ring is None)
    a, w = bar.count(elem)
    homes = m.rings.group(bar.sym, elem, bar.shape)
    if s.n >= 0 and bar.ring is None:
        a_max, w_new = a - s.n - 1, max(w, a - s.n)
    else:
        a_max, w_new = (ring_slots.a_max(bar), w + 1) if bar.ring is not None else \
            (w - ~s.n, w + 1)
        short = [h for h in homes if bar.count(h)[0] <= a_max]
        if bar.ring is not None:  # DIAL-11: the lockstep schedule may satisfy it instead
            m.await_log.await_(s, m.env, [(bar.serial, h) for h in homes], a_max,
                               [int(h[bar.ring.dim] < bar.pre_arrive) for h in homes],
                               f"{bar.sym.name}{list(elem)} at line {s.loc.line}")
        if a_max >= 0 and short:
            h = short[0]
            via = "" if h == elem else f" (multicast home {bar.sym.name}{list(h)})"
            found = Finding(
                "deadlock", f"UNSATISFIABLE AWAIT @ {bar.sym.name}{list(elem)}: await #{w} "
                f"pairs with arrive #{a_max}{via} but only {bar.count(h)[0]} arrive(s) precede "
                "it in the sequential trace", bar.sym.name, elem, s.loc,
                m.origin(s.loc, "await", threads), None,
                sync_hint="the paired Arrive must come before this Await in the sequential "
                          "trace (SEM-6.7)" if bar.ring is None else
                          "order every Arrive this Await needs before it, in the sequential "
                          "trace or with sibling cuda_threads iterations in lockstep, the same "
                          "schedule for every Await (DIAL-11)",
                **({"rule": "DIAL-11", "code": "ERR-V07"} if bar.ring is not None else {}))
            if bar.ring is not None:
                m.defer(found)
            else:
                m.report(found)
        if a_max >= 0:  # TX-1: the phase this Await consumes has all its bytes
            found = m.ledger.check((bar.serial, elem, a_max), bar.sym.name,
                                   m.origin(s.loc, "await", threads))
            if found is not None:
                m.report(found)
    if bar.mech is CudaMbarrier and bar.ring is None:
        m.order.await_(threads, (bar.serial, elem), a_max, a_max if s.n < 0 else None,
                       [(bar.serial, h) for h in homes])
    second = m.sync_code(rules.SYNC_SETS[s.second])
    key = bar.serial  # the allocation instance, as the tags (SEM-2.4)
    done = augment_key(threads, second)
    for co in m.index.tagged_with(key, elem):
        if co.augmented(done):
            continue
        if co.retired_by(key, elem, a_max):
            keys = co.augment(threads, second)
            if keys:
                m.index.note(co, keys)
    bar.count(elem)[1] = w_new


def free_barrier(m: MachineView, bar: BarrierInstance, loc: SrcLoc) -> None:
    """SEM-6.6: every element must have as many awaits as arrives when freed; TX-1: phases
    never awaited still balance their transaction bytes."""
    for key in m.ledger.open_phases(bar.serial):
        found = m.ledger.check(key, bar.sym.name, None)
        if found is not None:
            m.report(found)
    if bar.ring is not None:
        ring_slots.free(m, bar, loc)  # DIAL-16: every slot recycled
    if not bar.balanced:
        return  # endgame: no count balance at the free (DIAL-12)
    for elem in bar.elements():
        a, w = bar.count(elem)
        if a != w:
            m.report(Finding(
                "barrier-count", f"Arrive count ({a}) != Await count ({w}) @ "
                f"{bar.sym.name}{list(elem)} when it is freed", bar.sym.name, elem, loc,
                None, None, sync_hint="balance the barrier: e.g. a final Await(cg, ..., 0) "
                "for a commit group"))
            return
