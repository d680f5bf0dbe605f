"""The machine's accesses: instr calls (owner slices, TMA transactions and barrier reads),
element boxes with their bounds, mbarrier storage reads and writes, and SMEM frees (SEM-4.3,
SEM-4.7, SEM-6.2, TX-1, DIAL-6, DIAL-18).

A mixin of `Machine` (machine.py), which walks the trace and owns the state these steps read
(declared below); the checks and records themselves are `HazardChecks` (hazards.py).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterator

from verifier import collectives
from verifier.diagnostics import SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.instrs import Instr, callee_distributed
from verifier.lang.stdlib.timelines import InstrTL, QualTL
from verifier.semantics import barriers, data_rings, ring_slots, rules
from verifier.semantics.access import InstrArg, box_exprs, clipped_box, instr_args
from verifier.semantics.exprs import compile_boxes
from verifier.semantics.hazards import HazardChecks
from verifier.semantics.histories import Box, BufInstance
from verifier.semantics.rules import AccessKind
from verifier.semantics.state import Finding
from verifier.semantics.threads import Threads
from verifier.semantics.transactions import TxLedger, tma_bytes

class Ctx:
    """Where the walk is: scope, device function, task, tiling, thread-loop iterator values."""

    __slots__ = ("cuda", "dev", "task", "tiling", "warp_name", "iters")

    def __init__(self, cuda: bool = False, dev: Any = None, task: int = 0, tiling: Any = None,
                 warp_name: str | None = None, iters: tuple[tuple[ir.Sym, int], ...] = ()
                 ) -> None:
        self.cuda, self.dev, self.task, self.tiling = cuda, dev, task, tiling
        self.warp_name, self.iters = warp_name, iters

    def inside(self, tiling: Any, warp_name: str | None, iters: tuple[tuple[ir.Sym, int], ...]
               ) -> "Ctx":
        return Ctx(self.cuda, self.dev, self.task, tiling, warp_name, iters)



class Accesses(HazardChecks):
    """The access steps of the walk (mixed into `Machine`, which provides the rest)."""

    bufs: dict[ir.Sym, BufInstance]
    barriers: dict[ir.Sym, barriers.BarrierInstance]
    data_rings: dict[ir.Sym, data_rings.DataRingInstance]
    ledger: TxLedger
    free_exempt: frozenset[ir.Sym]
    free_complete: frozenset[ir.Sym]
    current_dev_threads: int
    current_block_dim: int
    value: Callable[[ir.Expr], int]
    collective: Callable[[Ctx], Threads]
    cached: Callable[[ir.Stmt, Any], Any]
    cached_key: Callable[[Any, Any], Any]
    shape_of: Callable[[ir.Sym], tuple[int, ...]]


    def call(self, s: ir.Call, ctx: Ctx) -> None:
        if not isinstance(s.callee, Instr):
            raise Unsupported("not supported by spork-verify: call of a non-instr proc",
                              s.loc, code="ERR-V11", rule="LANG-3.10")
        if s.callee.unmodelled:
            raise Unsupported(f"not supported by spork-verify yet: instruction "
                              f"{s.callee.unmodelled}", s.loc, code="ERR-V11", rule="LANG-3.11")
        args, windows = self.cached_key(("windows", id(s)), lambda: _call_args(s))
        threads = self.collective(ctx)
        tags: frozenset[tuple[int, tuple[int, ...], int]] = frozenset()
        if s.trailing:  # SEM-4.4 P₀ / SEM-6.5: tagged with each named element's arrive count
            bar = self.barriers[s.trailing[0].buf]
            _, named = barriers.referenced(s.trailing[0], bar, self.value)
            tags = frozenset((bar.serial, e, bar.count(e)[0]) for e in named)
            ring_slots.trailing(self, s, threads, bar, named)  # DIAL-10
        boxes = [clipped_box(s, a, box, self.shape_of(a.buf), self.value) if a.param.clip
                 else box for a, box in zip(args, windows(self.env))]
        for k, (a, box) in enumerate(zip(args, boxes)):
            for part, by in self.owner_slices(s, k, a, box, ctx, threads):
                self.access(a.buf, part, a.kind, s.callee.instr_tl, by, s.loc, ctx,
                            atomic_quals=a.atomic_quals, in_instr=True, tags=tags)
        if s.trailing:
            self.tma_barrier_reads(s, threads, bar, named, tags)
            if s.callee.tma is not None:
                self.transactions(s, threads, bar)

    def tma_barrier_reads(self, s: ir.Call, threads: Threads, bar: barriers.BarrierInstance,
                          named: list[tuple[int, ...]],
                          tags: frozenset[tuple[int, tuple[int, ...], int]]) -> None:
        """SEM-6.2: the TMA reads the mbarrier storage it names, carrying the tags."""
        buf = self.bufs.get(bar.sym)
        if buf is None or not buf.tracked:
            return
        assert isinstance(s.callee, Instr)
        entry = rules.qual_entry("mbarrier", s.callee.instr_tl, "mbarrier storage")
        quals, qbits = self.qual_codes(entry)
        for elem in named:
            self.check_and_record(buf, tuple((i, i + 1) for i in elem), AccessKind.read, entry,
                                  quals, qbits, False, True, threads, s.loc, frozenset(), tags)

    def transactions(self, s: ir.Call, threads: Threads, bar: barriers.BarrierInstance) -> None:
        """TX-1: each issuing CTA expects on its own element, completes on every destination's,
        both in the issuer's phase (SEM-8.6)."""
        assert isinstance(s.callee, Instr) and s.callee.tma is not None and \
            threads.task is not None
        info = s.callee.tma
        kw = dict(s.kwargs)
        ncta = info.ncta(kw)
        src = next(a for p, a in zip(s.callee.params, s.args) if p.name == info.source)
        assert isinstance(src, ir.Window)
        expected, delivered = tma_bytes(info, kw, self.bufs[src.buf].base)
        home, _ = barriers.referenced(s.trailing[0], bar, self.value)
        free = [k for k, h in enumerate(home) if h is None]
        block = self.current_block_dim
        origin = self.origin(s.loc, "TMA load", threads)
        for rank in sorted({n // block for n in threads.ids()}):
            y = (rank // kw.get("cta_stride", 1)) % ncta

            def element(d: int) -> tuple[int, ...]:
                return tuple(d if k in free else h for k, h in enumerate(home))  # type: ignore

            own = element(y)
            phase = bar.count(own)[0]
            self.ledger.expect((bar.serial, own, phase), s.loc, origin, expected)
            for d in range(ncta) if free else [y]:
                self.ledger.complete((bar.serial, element(d), phase), s.loc, origin, delivered)

    def owner_slices(self, s: ir.Call, k: int, a: InstrArg, box: Box, ctx: Ctx,
                     threads: Threads) -> Iterator[tuple[Box, Threads]]:
        """The argument's box with the threads accessing it: the calling collective, or for an
        owner-only distributed window (COLL-5.12, SEM-4.3) one sub-box per slice with the
        slice's owner, as if the access sat in `cuda_threads` loops over the distributed dims.
        The distributed dims are the window's leading intervals, so the sub-boxes in
        lexicographic order list the elements in C order."""
        dims = callee_distributed(a.param, a.arg) if isinstance(a.arg, ir.Window) and \
            a.param.owner_only and ctx.cuda else ()
        if not dims:
            yield box, threads
            return

        def make() -> tuple[Any, tuple[ir.Sym, ...]]:
            tiling, syms = ctx.tiling, []
            for j, d in enumerate(dims):
                sym = ir.Sym.fresh(f"_{j}_CALLEE_DISTRIBUTED")
                tiling = collectives.tile_threads(tiling, sym, sym.name, 0,
                                                  self.value(d.interval.hi), d.unit, ctx.dev)
                syms.append(sym)
            return tiling, tuple(syms)
        tiling, syms = self.cached_key((id(s), k), make)
        ranges = [range(*box[d.pos]) for d in dims]
        lows = [self.value(d.interval.lo) for d in dims]
        for index in itertools.product(*ranges):
            key = tuple(i - lo for i, lo in zip(index, lows))
            part = list(box)
            for d, i in zip(dims, index):
                part[d.pos] = (i, i + 1)
            yield tuple(part), self.collective(ctx.inside(tiling, ctx.warp_name,
                                                          ctx.iters + tuple(zip(syms, key))))

    def access(self, sym: ir.Sym, box: tuple[tuple[int, int], ...], kind: AccessKind,
               instr_tl: InstrTL, threads: Threads, loc: SrcLoc, ctx: Ctx,
               atomic_quals: frozenset[QualTL] = frozenset(), in_instr: bool = False,
               tags: frozenset[tuple[int, tuple[int, ...], int]] = frozenset()) -> None:
        """Every element of `box`, in C order (SEM-4.3): bounds, then checks and records;
        `tags` is P₀ of the records (a trailing barrier's pending tags, SEM-4.4)."""
        buf = self.bufs[sym]
        dr = self.data_rings.get(sym)
        shape = dr.logical if dr is not None else buf.shape  # `shape_of`, inlined
        inside = len(box) == len(shape)
        for k, (lo, hi) in enumerate(box):
            if hi <= lo:
                return  # an empty window touches nothing
            if inside and (lo < 0 or hi > shape[k]):
                inside = False
        if inside:
            if dr is not None and buf.tracked:  # DIAL-18: the handoff, then the slot
                self.tracked_access(dr.shadow, box, AccessKind.read, instr_tl, threads, loc,
                                    ctx, frozenset(), in_instr)
                slot = data_rings.to_slot(dr, box)
                if slot is None:
                    raise Unsupported(f"not supported by spork-verify: an interval along the "
                                      f"ring dimension of the data ring buffer {sym.name} "
                                      "(DIAL-18)", loc, code="ERR-V11", rule="DIAL-18")
                box = slot
            if buf.tracked:
                self.tracked_access(buf, box, kind, instr_tl, threads, loc, ctx, atomic_quals,
                                    in_instr, tags)
            return
        for index in itertools.product(*(range(lo, hi) for lo, hi in box)):
            if len(index) != len(shape) or any(not 0 <= i < n for i, n in zip(index, shape)):
                self.report(Finding(
                    "out-of-bounds", f"OUT OF BOUNDS @ {sym.name}{list(index)} (shape "
                    f"{list(shape)})", sym.name, index, loc, self.origin(loc, kind.value, threads),
                    None))
                if not buf.tracked:
                    return  # no later element of this access can report anything new
            elif buf.tracked:
                self.access(sym, tuple((i, i + 1) for i in index), kind, instr_tl, threads,
                            loc, ctx, atomic_quals, in_instr, tags)

    def tracked_access(self, buf: BufInstance, box: tuple[tuple[int, int], ...],
                       kind: AccessKind, instr_tl: InstrTL, threads: Threads, loc: SrcLoc,
                       ctx: Ctx, atomic_quals: frozenset[QualTL], in_instr: bool,
                       tags: frozenset[tuple[int, tuple[int, ...], int]] = frozenset()) -> None:
        entry, quals, qbits = self.entry(buf, instr_tl)
        single = threads.task is not None and threads.mask & (threads.mask - 1) == 0 \
            and threads.mask != 0
        conv = rules.access_convergent(entry.q0, kind, in_instr, ctx.cuda, single)
        self.check_and_record(buf, box, kind, entry, quals, qbits, conv,
                              entry.q0 in rules.OUT_OF_ORDER, threads, loc, atomic_quals, tags)

    def storage_access(self, sym: ir.Sym, elem: tuple[int, ...], threads: Threads,
                       loc: SrcLoc, sm80: bool, conv: bool = True,
                       tags: frozenset[tuple[int, tuple[int, ...], int]] = frozenset()
                       ) -> None:
        """SEM-6.2: an in-order read of mbarrier storage by an Arrive/Await: convergent, but
        each thread's own for an endgame ring (DIAL-6: every arriving thread arrives)."""
        buf = self.bufs[sym]
        if len(elem) != len(buf.shape) or any(not 0 <= i < n for i, n in zip(elem, buf.shape)):
            if buf.ordering:  # an endgame ring index past its extent (DIAL-2, SEM-4.3)
                self.report(Finding("out-of-bounds", f"OUT OF BOUNDS @ {sym.name}{list(elem)} "
                                    f"(shape {list(buf.shape)})", sym.name, elem, loc,
                                    self.origin(loc, "read", threads), None))
                return
            raise Unsupported(f"barrier element {sym.name}{list(elem)} outside its shape "
                              f"{list(buf.shape)}", loc, code="ERR-V11", rule="COLL-5.9")
        if not buf.tracked:
            return
        q0 = QualTL.Sm80 if sm80 else QualTL.cuda2
        entry = rules.QualEntry(q0, frozenset({q0, QualTL.cuda2}))
        quals, qbits = self.qual_codes(entry)
        self.check_and_record(buf, tuple((i, i + 1) for i in elem), AccessKind.read, entry,
                              quals, qbits, conv, False, threads, loc, frozenset(), tags)

    def storage_write(self, sym: ir.Sym, elem: tuple[int, ...], threads: Threads, loc: SrcLoc,
                      entry: rules.QualEntry,
                      tags: frozenset[tuple[int, tuple[int, ...], int]],
                      recycle: bool = False) -> None:
        """DIAL-6, DIAL-7: a write of ring-barrier storage (a slot's handoff or recycling);
        the recycling writes of one phase (its arrives, atomic on the mbarrier) are atomic
        to one another (RECYCLE_ATOMIC)."""
        buf = self.bufs[sym]
        if not buf.tracked:
            return
        quals, qbits = self.qual_codes(entry)
        kind, atomic = (AccessKind.atomic, rules.RECYCLE_ATOMIC) if recycle else \
            (AccessKind.write, frozenset())
        self.check_and_record(buf, tuple((i, i + 1) for i in elem), kind, entry,
                              quals, qbits, False, entry.q0 in rules.OUT_OF_ORDER, threads, loc,
                              atomic, tags)

    def free(self, a: ir.Alloc, ctx: Ctx) -> None:
        """SEM-4.7: SMEM frees are non-atomic write-only mutates by the whole cluster."""
        bar = self.barriers.pop(a.name, None)
        if bar is not None:
            barriers.free_barrier(self, bar, a.loc)
        self.check_freed(a, ctx, a.loc, end_of_scope=True)
        self.bufs.pop(a.name, None)
        self.data_rings.pop(a.name, None)

    def check_freed(self, a: ir.Alloc, ctx: Ctx, loc: SrcLoc, end_of_scope: bool = False
                    ) -> None:
        """The SEM-4.7 check of freeing `a` here, reported at `loc` (DIAL-20's at the end of
        the scope of a persistent ring); frees nothing."""
        buf = self.bufs.get(a.name)
        if buf is None or not buf.tracked or buf.mem.family not in ("smem", "mbarrier") \
                or a.name in self.free_exempt:
            return
        threads = Threads(ctx.task, (1 << self.current_dev_threads) - 1)
        self.check_free(buf, threads, loc,
                        some_thread=end_of_scope and a.name in self.free_complete)


def _call_args(s: ir.Call) -> tuple[list[InstrArg], Callable[[Any], tuple[Box, ...]]]:
    """The call's accessed arguments and their windows' boxes as one compiled function of the
    environment (SEM-4.3; each bound evaluated alone cost as much as the checks)."""
    args = instr_args(s)
    return args, compile_boxes([box_exprs(a.arg) for a in args])

