"""The concrete abstract machine: runs a proc's sequential trace at given sizes (SEM-1..6).

Reads the IR, the collective tilings (verifier.collectives) and the rule tables (rules.py);
this module walks the trace (statements, loops, kernels, syncs), machine_access.py holds its
access steps (calls, element boxes, barrier storage, frees) and hazards.py their checks;
produces the first error in trace order as a `Finding`, or None. It is the oracle that every
symbolic counterexample is replayed on and the reference in differential tests.

Representation (exact, see histories.py and records.py): thread sets are bitmasks, records
are shared by every element one access touches, and an access to a window works on the
window's distinct histories with numpy rather than element by element.

Non-goals: static legality (verifier.check.static runs before), data values (SEM-1.1:
verification is independent of them).
"""

from __future__ import annotations

import gc
import itertools
from dataclasses import replace
from typing import Any, Callable, Iterator, Mapping

from verifier import collectives
from verifier.diagnostics import SrcLoc, UnhandledNode, Unsupported
from verifier.lang.ir import ir
from verifier.lang.rewrite.inline import inline_calls
from verifier.lang.ir.lifetimes import early_releases
from verifier.lang.stdlib.memories import MBARRIER_STORAGE, CudaMbarrier, Memory, smem_below_cluster
from verifier.lang.stdlib.dialects import ENDGAME
from verifier.lang.stdlib.timelines import InstrTL
from verifier.semantics import barriers, data_rings, ring_slots, rules
from verifier.semantics.access import tracked_buffers
from verifier.semantics.exprs import admits, compile_expr, data_reads, layout_free
from verifier.semantics.histories import BufInstance, HistoryTable
from verifier.semantics import index as record_index
from verifier.semantics.index import RecordIndex
from verifier.semantics.cohort_book import CohortBook
from verifier.semantics.machine_access import Accesses, Ctx
from verifier.semantics.records import Cohort, Covs, SyncCode, augment_key
from verifier.semantics.rings import CompletionOrder, ring_info
from verifier.semantics.rules import AccessKind
from verifier.semantics.schedules import AwaitLog, Schedule, layouts
from verifier.semantics.state import Finding, MachineError, Origin
from verifier.semantics.threads import EVERYONE, Threads
from verifier.semantics.transactions import TxLedger


class Machine(Accesses, CohortBook):
    """One run of the machine over one proc at concrete sizes."""

    # A sync splits a family (SEM-4.4) even where the parts end up alike, so that a report
    # names exactly the threads of the record that failed. The batched machine, which only
    # decides whether any check fails (fast.py), skips such neutral splits.
    exact_families = True

    def __init__(self, proc: ir.Proc, sizes: Mapping[str, int], collect_all: bool = False,
                 stop_at: tuple[str, str | None, SrcLoc] | None = None,
                 only: frozenset[str] | None = None, releases: bool = False) -> None:
        self.proc = proc
        # CG-R1: with `releases`, the SEM-4.7 free check also runs at every early-release
        # candidate (lang/ir/lifetimes.py), without freeing: it replays a release's candidate
        # DIAL-17: in an endgame proc the check at the candidate (upstream's free after the
        # last use) is always on: it decides the verdict there
        self.release_at: dict[int, list[ir.Alloc]] = {}
        for r in early_releases(proc.body) if releases or proc.dialect == ENDGAME else ():
            self.release_at.setdefault(id(r.before), []).append(r.alloc)
        self.only = only  # names of the variables whose histories are kept (None: all; M8)
        self.collect_all = collect_all
        self.stop_at = stop_at  # collect-all run ends once this (kind, variable, loc) is seen
        self.findings: list[Finding] = []
        self.env: dict[ir.Sym, int] = {}
        self.bufs: dict[ir.Sym, BufInstance] = {}
        self.data_rings: dict[ir.Sym, data_rings.DataRingInstance] = {}  # DIAL-18
        self.tracked = tracked_buffers(proc)
        self.table = HistoryTable()
        self.covs = Covs()  # the roots of this run's coverage maps (records.py)
        self.tiling_cache: dict[Any, Any] = {}
        self.compiled: dict[int, Callable[[Mapping[ir.Sym, Any]], Any]] = {}
        self.coll_cache: dict[tuple[Any, ...], Threads] = {}
        self.sync_codes: dict[int, SyncCode] = {}
        self.current_dev_threads = 0
        self.current_block_dim = 1
        self.by_task = {}  # CohortBook (Choice M15)
        self.task_records = self.task_kept = 0  # entries of by_task: now, after the last prune
        self.open = {}
        self.barriers: dict[ir.Sym, barriers.BarrierInstance] = {}
        self.index = RecordIndex()
        self.order = CompletionOrder()  # SEM-6.8
        self.rings = ring_info(proc.body)
        self.free_exempt = ring_slots.synchronous_rings(proc)  # DIAL-12
        self.free_complete = data_rings.complete_at_free(proc.body)  # DIAL-20
        self.ledger = TxLedger()  # TMA transaction counts (TX-1)
        self.sizes = dict(sizes)
        # DIAL-11: ring Awaits the sequential trace leaves unsatisfied wait (`deferred`, with
        # the count of findings before them) for the lockstep schedule's verdict at the end
        self.await_log = AwaitLog(layouts(proc.body, Schedule.LOCKSTEP))
        self.deferred: list[tuple[int, Finding]] = []
        self.arg_syms = frozenset(a.name for a in proc.args)
        for a in proc.args:
            if isinstance(a.typ, ir.Control):
                if a.name.name not in sizes:
                    raise KeyError(f"missing value for {a.name.name}")
                self.env[a.name] = int(sizes[a.name.name])
        for a in proc.args:
            if not isinstance(a.typ, ir.Control):
                self.declare(a.name, a.typ, a.mem)

    # ------------------------------------------------------------ entry

    def preconditions_hold(self) -> bool:
        for a in self.proc.args:
            if isinstance(a.typ, ir.Control) and not admits(a.typ.kind, self.env[a.name]):
                return False
        return all(bool(self.value(p)) for p in layout_free(self.proc.preds))

    def run(self) -> list[Finding]:
        """Errors in trace order: the first only, or (collect_all) every distinct one, the
        machine carrying on after a hazard as if the check had passed."""
        ended = False
        try:
            self.block(self.proc.body, Ctx())
            ended = True
        except MachineError as e:
            self.findings.append(e.finding)
        if self.deferred:
            self.settle_deferred(ended)
        return self.findings

    def defer(self, finding: Finding) -> None:
        """A ring Await unsatisfied in the sequential trace (DIAL-11): an error only if the
        lockstep schedule also leaves some Await unsatisfied, known at the end of the run."""
        self.deferred.append((len(self.findings), finding))

    def settle_deferred(self, ended: bool) -> None:
        """DIAL-11: the deferred Awaits are errors unless the lockstep schedule satisfies
        every ring Await of the run (one schedule for all, schedules.py). A run stopped early
        has not logged them all: a run that only counts (no histories) logs the rest."""
        log = self.await_log
        if not ended:
            whole = Machine(self.proc, self.sizes, collect_all=True, only=frozenset())
            whole.run()
            log = whole.await_log
        missed = log.first_unsatisfied()
        if missed is None:
            return
        also = (f"; nor does {Schedule.LOCKSTEP.value} satisfy every Await ({missed.what} "
                "misses an arrive there), so no schedule of DIAL-11 does")
        found: list[tuple[int, Finding]] = []
        for at, f in self.deferred:  # each Await site once, at its first instance
            if all((g.kind, g.variable, g.loc) != (f.kind, f.variable, f.loc) for _, g in found):
                found.append((at, replace(f, message=f.message + also)))
        if not self.collect_all:  # it comes before the error the run stopped at, if any
            try:
                self.report(found[0][1])  # raises (the batched machine: Diverge)
            except MachineError as e:
                self.findings = [e.finding]
            return
        for at, f in reversed(found):
            if all((g.kind, g.variable, g.loc) != (f.kind, f.variable, f.loc)
                   for g in self.findings):
                self.findings.insert(at, f)

    def report(self, finding: Finding) -> None:
        if not self.collect_all:
            raise MachineError(finding)
        key = (finding.kind, finding.variable, finding.loc)
        if key == self.stop_at:
            raise MachineError(finding)
        if all((f.kind, f.variable, f.loc) != key for f in self.findings):
            self.findings.append(finding)

    # ------------------------------------------------------------ helpers

    def value(self, e: ir.Expr) -> int:
        fn = self.compiled.get(id(e))
        if fn is None:
            fn = self.compiled[id(e)] = compile_expr(e)
        return fn(self.env)

    def sync_code(self, sets: rules.SyncSets) -> SyncCode:
        code = self.sync_codes.get(id(sets))
        if code is None:
            code = self.sync_codes[id(sets)] = SyncCode.of(sets)
        return code

    def declare_barrier(self, sym: ir.Sym, typ: ir.BarrierType, ctx: Ctx, loc: SrcLoc) -> None:
        shape = tuple(self.value(d) for d in typ.shape)
        ring = typ.ring if typ.mech is CudaMbarrier else None
        bar = self.barriers[sym] = barriers.BarrierInstance(
            sym, shape, typ.mech, ring=ring, pre_arrive=typ.pre_arrive,
            balanced=self.proc.dialect != ENDGAME)
        if typ.mech is CudaMbarrier:
            self.bufs[sym] = BufInstance(sym, shape, MBARRIER_STORAGE, self.keeps(sym),
                                         ordering=ring is not None)
        if ring is not None:
            ring_slots.start(self, bar, self.collective(ctx).task, loc)

    def declare(self, sym: ir.Sym, typ: ir.Type, mem: Any) -> None:
        shape = tuple(self.value(d) for d in typ.shape) if isinstance(typ, ir.Tensor) else ()
        tracked = sym in self.tracked and isinstance(mem, Memory) and not mem.sync_exempt \
            and self.keeps(sym)
        base = ir.element_type(typ) or "f32"
        self.bufs[sym] = BufInstance(sym, shape, mem, tracked, base=base)

    def declare_data_ring(self, sym: ir.Sym, typ: ir.Tensor, ctx: Ctx, loc: SrcLoc) -> None:
        """DIAL-18: x's histories per physical slot, its handoff shadow of the logical shape."""
        buf = self.bufs[sym]
        assert typ.ring_guard is not None
        rank = len(self.barriers[typ.ring_guard].shape)
        shadow = BufInstance(sym, buf.shape, buf.mem, buf.tracked, base=buf.base,
                             ordering=True, handoff=(typ.ring_guard.name, rank))
        self.bufs[sym] = BufInstance(sym, data_rings.physical_shape(typ, buf.shape), buf.mem,
                                     buf.tracked, base=buf.base)
        dr = self.data_rings[sym] = data_rings.DataRingInstance(typ.ring, buf.shape, shadow)
        if buf.tracked:
            data_rings.start(self, typ, dr, self.collective(ctx).task, loc)

    def shape_of(self, sym: ir.Sym) -> tuple[int, ...]:
        """The shape accesses index (a data ring's logical shape, DIAL-18)."""
        dr = self.data_rings.get(sym)
        return dr.logical if dr is not None else self.bufs[sym].shape

    def keeps(self, sym: ir.Sym) -> bool:
        """Whether this run keeps the histories of `sym` (Choice M8: a targeted replay keeps
        only its obligation's variable; no other variable's checks or records can change)."""
        return self.only is None or sym.name in self.only

    def collective(self, ctx: Ctx) -> Threads:
        if not ctx.cuda:
            return EVERYONE
        key = (id(ctx.tiling), ctx.task, tuple(v for _, v in ctx.iters))
        threads = self.coll_cache.get(key)
        if threads is None:
            local = collectives.thread_set(ctx.tiling, dict(ctx.iters), ctx.dev)
            threads = self.coll_cache[key] = Threads.of(ctx.task, local)
        return threads

    def origin(self, loc: SrcLoc, what: str, threads: Threads) -> Origin:
        return Origin(loc, what, tuple(self.env.items()), self.arg_syms, threads)

    def collect_garbage(self) -> None:
        self.table.collect(list(self.bufs.values()) +
                           [dr.shadow for dr in self.data_rings.values()])
        if self.index.due():  # dead entries cost only time until then (syncs skip them)
            self.index.prune()
        if self.task_records > 2 * self.task_kept + record_index.PRUNE_ENTRIES:
            for key in list(self.by_task):
                self.by_task[key] = [co for co in self.by_task[key] if co.live]
            self.task_records = self.task_kept = sum(map(len, self.by_task.values()))

    def release(self) -> None:
        """After the run: break the group <-> record cycles of the records still held, so
        that reference counting frees the run's objects with the machine. The cyclic
        collector, paused during the run, would otherwise scan every object the run made
        once it resumes (0.4 s of a 3 s run)."""
        for h in self.table.histories:
            if h is not None:
                for g in h[0]:
                    g.records = []
                for g in h[1]:
                    g.records = []
        for g in self.table.groups:  # groups made since the last collection (regions' too)
            g.records = []
        for g in self.table.groups:
            g.records = []

    # ------------------------------------------------------------ statements

    def block(self, stmts: tuple[ir.Stmt, ...], ctx: Ctx) -> None:
        allocated: list[ir.Alloc] = []
        for s in stmts:
            for a in reversed(self.release_at.get(id(s), ())):  # as the frees of a scope
                self.check_freed(a, ctx, s.loc)
            if isinstance(s, ir.Alloc):
                allocated.append(s)
            self.stmt(s, ctx)
            if self.table.due():
                self.collect_garbage()
        for a in reversed(allocated):
            self.free(a, ctx)

    def stmt(self, s: ir.Stmt, ctx: Ctx) -> None:
        match s:
            case ir.Call():
                self.call(s, ctx)
            case ir.For():
                self.loop(s, ctx)
            case ir.If(cond=cond, body=body, orelse=orelse):
                self.block(body if self.value(cond) else orelse, ctx)
            case ir.Assign(buf=buf, idx=idx, rhs=rhs) | ir.Reduce(buf=buf, idx=idx, rhs=rhs):
                threads = self.collective(ctx)
                instr_tl = self.scope_instr_tl(ctx)
                for r in data_reads(rhs):
                    self.access(r.buf, self.point_box(r.idx), AccessKind.read, instr_tl,
                                threads, r.loc, ctx)
                kind = AccessKind.write if isinstance(s, ir.Assign) else AccessKind.read_write
                self.access(buf, self.point_box(idx), kind, instr_tl, threads, s.loc, ctx)
            case ir.Pass() | ir.WindowStmt():
                pass
            case ir.Alloc(name=name, typ=typ, mem=mem):
                if isinstance(typ, ir.BarrierType):
                    self.declare_barrier(name, typ, ctx, s.loc)
                else:
                    if isinstance(mem, Memory) and mem.is_smem and ctx.iters and \
                            ctx.dev is not None and ctx.dev.clusterDim > 1:
                        raise smem_below_cluster(name.name, mem, s.loc)
                    self.declare(name, typ, mem)
                    if isinstance(typ, ir.Tensor) and typ.ring is not None:
                        self.declare_data_ring(name, typ, ctx, s.loc)
            case ir.DeviceFunction():
                self.device_function(s, ctx)
            case ir.Warps(cfg=cfg, body=body):
                tiling, name = self.cached(s, lambda: collectives.tile_warps(
                    ctx.tiling, cfg, ctx.dev, ctx.warp_name))
                self.block(body, ctx.inside(tiling, name, ctx.iters))
            case ir.Fence(first=first, second=second):
                self.fence(self.collective(ctx), rules.SYNC_SETS[first],
                           rules.SYNC_SETS[second])
            case ir.Arrive(targets=targets):
                bar = self.barriers[targets[0].buf]
                barriers.arrive(self, s, self.collective(ctx), bar,
                                rules.commit_each_element(s, ctx.tiling, bar.shape))
            case ir.Await(target=target):
                barriers.await_(self, s, self.collective(ctx), self.barriers[target.buf])
            case _:
                raise UnhandledNode(s)

    def point_box(self, idx: tuple[ir.Expr, ...]) -> tuple[tuple[int, int], ...]:
        out = []
        for e in idx:
            v = self.value(e)
            out.append((v, v + 1))
        return tuple(out)

    def cached(self, s: ir.Stmt, make: Any) -> Any:
        return self.cached_key(id(s), make)

    def cached_key(self, key: Any, make: Any) -> Any:
        if key not in self.tiling_cache:
            self.tiling_cache[key] = make()
        return self.tiling_cache[key]

    @staticmethod
    def scope_instr_tl(ctx: Ctx) -> InstrTL:
        return InstrTL.cuda_in_order_instr if ctx.cuda else InstrTL.cpu_in_order_instr

    def loop(self, s: ir.For, ctx: Ctx) -> None:
        lo, hi = self.value(s.lo), self.value(s.hi)
        match s.mode:
            case ir.Seq():
                for v in range(lo, hi):
                    self.env[s.iter] = v
                    self.block(s.body, ctx)
            case ir.CudaThreads(unit=unit):
                tiling = self.cached(s, lambda: collectives.tile_threads(
                    ctx.tiling, s.iter, s.iter.name, lo, hi, unit, ctx.dev))
                for v in range(lo, hi):
                    self.env[s.iter] = v
                    self.block(s.body, ctx.inside(tiling, ctx.warp_name,
                                                  ctx.iters + ((s.iter, v),)))
            case ir.CudaTasks() | ir.Par():
                raise Unsupported(f"not supported by spork-verify: {type(s.mode).__name__} loop "
                                  "here", s.loc, code="ERR-V11", rule="LANG-3.10")
            case _:
                raise UnhandledNode(s)
        self.env.pop(s.iter, None)

    def device_function(self, s: ir.DeviceFunction, ctx: Ctx) -> None:
        """SEM-1.6: kernel-boundary fences, one task per innermost cuda_tasks iteration."""
        self.fence(EVERYONE, rules.KERNEL_START_FIRST, rules.KERNEL_SYNC)
        loops: list[ir.For] = []
        node: ir.Stmt | None = s.body[0]
        while isinstance(node, ir.For) and isinstance(node.mode, ir.CudaTasks):
            loops.append(node)
            inner = node.body[0] if len(node.body) == 1 else None
            node = inner if isinstance(inner, ir.For) and isinstance(inner.mode, ir.CudaTasks) \
                else None
        task_body = loops[-1].body
        dev = s.cfg
        top = collectives.top_tiling(dev)
        task_ids = itertools.count()
        self.current_dev_threads = dev.num_threads
        self.current_block_dim = dev.blockDim

        self.task_nest(loops, 0, task_body, dev, top, task_ids)
        self.join(EVERYONE, None)
        self.fence(EVERYONE, rules.KERNEL_SYNC, rules.KERNEL_SYNC)
        merged = [co for cos in self.by_task.values() for co in cos if co.live]
        self.by_task = {None: merged}  # after a kernel boundary every record holds 𝔾 grants
        self.open = {}

    def task_nest(self, loops: list[ir.For], depth: int, body: tuple[ir.Stmt, ...],
                  dev: Any, top: Any, task_ids: Iterator[int]) -> None:
        """The cuda_tasks loops from `depth` in: each innermost iteration one task. (A method,
        not a closure: a recursive closure is a cycle holding the machine, which only the
        cyclic collector would free, scanning every object of the run.)"""
        if depth == len(loops):
            task = next(task_ids)
            self.block(body, Ctx(True, dev, task, top, dev.initial_warp_name()))
            self.join(Threads(task, (1 << dev.num_threads) - 1), task)
            return
        loop = loops[depth]
        for v in range(self.value(loop.lo), self.value(loop.hi)):
            self.env[loop.iter] = v
            self.task_nest(loops, depth + 1, body, dev, top, task_ids)
        self.env.pop(loop.iter, None)

    def join(self, whole: Threads, task: int | None) -> None:
        """JoinThreads (SEM-1.7) on every cohort the threads of `whole` can touch."""
        for co in self.live_cohorts(task):
            split, keys = co.join(whole)
            if keys:
                self.index.note(co, keys)
            if split is not None:
                self.add_cohort(task, split)

    # ------------------------------------------------------------ sync

    def fence(self, threads: Threads, first: rules.SyncSets, second: rules.SyncSets) -> None:
        """SEM-5.3."""
        first_code, second_code = self.sync_code(first), self.sync_code(second)
        if self.table.stale():
            self.collect_garbage()  # a fence visits every record it witnesses: drop dead ones
        done = augment_key(threads, second_code)
        for co in self.index.witness_candidates(threads, first_code):
            if done in co.cov.applied:  # Cohort.augmented, inlined (the hottest loop)
                continue
            target = self.witnessed_part(co, threads, first_code)
            if target is not None:
                keys = target.augment(threads, second_code)
                if keys:
                    self.index.note(target, keys)

    def witnessed_part(self, co: Cohort, threads: Threads, first: SyncCode) -> Cohort | None:
        """The cohort (family split off if needed) that a sync of `threads` witnesses."""
        part = co.witnessed(threads, first)
        if part is None:
            return None
        target = co.split(part)
        if target is not co:
            self.add_cohort(part.task, target)
        return target


def run_reference(proc: ir.Proc, sizes: Mapping[str, int], collect_all: bool = False,
                  stop_at: tuple[str, str | None, SrcLoc] | None = None,
                  only: frozenset[str] | None = None, releases: bool = False,
                  machine: type[Machine] = Machine) -> tuple[bool, list[Finding]]:
    """The machine of this module (or `machine`, a subclass) run at `sizes`: see run.py."""
    assert only is None or collect_all, "a first-error run must check every variable"
    m = machine(inline_calls(proc), sizes, collect_all, stop_at, only, releases)  # CALL-1
    if not m.preconditions_hold():
        return False, []
    # The run allocates millions of small containers and frees them by reference counting
    # (dead record groups drop their records, histories.py); Python's cyclic collector would
    # rescan the growing heap over and over (half the run time on gemm_sm80), so it is paused.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return True, m.run()
    finally:
        m.release()
        if enabled:
            gc.enable()
