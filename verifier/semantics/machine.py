"""The concrete abstract machine: runs a proc's sequential trace at given sizes (SEM-1..6).

Reads the IR, the collective tilings (verifier.collectives) and the rule tables (rules.py);
produces the first error in trace order as a `Finding`, or None. It is the oracle that every
symbolic counterexample is replayed on and the reference in differential tests.

Non-goals: static legality (verifier.check.static runs before), data values (SEM-1.1:
verification is independent of them).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping

from verifier import collectives
from verifier.diagnostics import SrcLoc, UnhandledNode, Unsupported
from verifier.lang import ir
from verifier.lang.config import CudaDeviceFunction
from verifier.lang.instrs import Instr
from verifier.lang.memories import MBARRIER_STORAGE, CudaMbarrier, Memory, smem_below_cluster
from verifier.lang.timelines import InstrTL, QualTL
from verifier.semantics import barriers, rules
from verifier.semantics.rings import CompletionOrder, ring_info
from verifier.semantics.exprs import PY_OPS, data_reads, eval_expr
from verifier.semantics.rules import AccessKind, Flag
from verifier.semantics.state import (
    EVERYONE, Finding, Grant, History, MachineError, Origin, Record, Threads,
)
from verifier.semantics.access import (
    InstrAccess, callee_distributed, instr_accesses, tracked_buffers,
)
from verifier.semantics.index import RecordIndex


@dataclass(frozen=True)
class Ctx:
    """Where the walk is: scope, device function, task, tiling, thread-loop iterator values."""

    cuda: bool = False
    dev: CudaDeviceFunction | None = None
    task: int = 0
    tiling: Any = None
    warp_name: str | None = None
    iters: tuple[tuple[ir.Sym, int], ...] = ()


@dataclass
class BufInstance:
    sym: ir.Sym
    shape: tuple[int, ...]
    mem: Memory
    tracked: bool
    history: dict[tuple[int, ...], History] = field(default_factory=dict)


class Machine:
    """One run of the machine over one proc at concrete sizes."""

    def __init__(self, proc: ir.Proc, sizes: Mapping[str, int], collect_all: bool = False,
                 stop_at: tuple[str, str | None, SrcLoc] | None = None) -> None:
        self.proc = proc
        self.collect_all = collect_all
        self.stop_at = stop_at  # collect-all run ends once this (kind, variable, loc) is seen
        self.findings: list[Finding] = []
        self.env: dict[ir.Sym, int] = {}
        self.bufs: dict[ir.Sym, BufInstance] = {}
        self.tracked = tracked_buffers(proc)
        self.tiling_cache: dict[Any, Any] = {}
        self.current_dev_threads = 0
        self.by_task: dict[int | None, list[Record]] = {}
        self.barriers: dict[ir.Sym, barriers.BarrierInstance] = {}
        self.index = RecordIndex()
        self.order = CompletionOrder()  # SEM-6.8
        self.rings = ring_info(proc.body)
        self._arg_syms = frozenset(a.name for a in proc.args)
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
            if isinstance(a.typ, ir.Control) and a.typ.kind == "size" and self.env[a.name] < 0:
                return False
        return all(bool(eval_expr(p, self.env, PY_OPS)) for p in self.proc.preds)

    def run(self) -> list[Finding]:
        """Errors in trace order: the first only, or (collect_all) every distinct one, the
        machine carrying on after a hazard as if the check had passed."""
        try:
            self.block(self.proc.body, Ctx())
        except MachineError as e:
            self.findings.append(e.finding)
        return self.findings

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
        return int(eval_expr(e, self.env, PY_OPS))

    def declare_barrier(self, sym: ir.Sym, typ: ir.BarrierType) -> None:
        shape = tuple(self.value(d) for d in typ.shape)
        self.barriers[sym] = barriers.BarrierInstance(sym, shape, typ.mech)
        if typ.mech is CudaMbarrier:
            self.bufs[sym] = BufInstance(sym, shape, MBARRIER_STORAGE, True)

    def storage_access(self, sym: ir.Sym, elem: tuple[int, ...], threads: Threads,
                       loc: SrcLoc, sm80: bool) -> None:
        """SEM-6.2: a convergent in-order read of mbarrier storage by an Arrive/Await."""
        q0 = QualTL.Sm80 if sm80 else QualTL.cuda2
        entry = rules.QualEntry(q0, frozenset({q0, QualTL.cuda2}))
        self.check_and_record(sym, elem, AccessKind.read, entry, True, False, threads, loc,
                              frozenset())

    def declare(self, sym: ir.Sym, typ: ir.Type, mem: Any) -> None:
        shape = tuple(self.value(d) for d in typ.shape) if isinstance(typ, ir.Tensor) else ()
        tracked = sym in self.tracked and isinstance(mem, Memory) and not mem.sync_exempt
        self.bufs[sym] = BufInstance(sym, shape, mem, tracked)

    def collective(self, ctx: Ctx) -> Threads:
        if not ctx.cuda:
            return EVERYONE
        assert ctx.dev is not None
        local = collectives.thread_set(ctx.tiling, dict(ctx.iters), ctx.dev)
        return Threads(ctx.task, frozenset(local))

    def origin(self, loc: SrcLoc, what: str, ctx: Ctx | None, threads: Threads) -> Origin:
        iters = tuple((s.name, v) for s, v in self.env.items() if s not in self.arg_syms())
        return Origin(loc, what, iters, threads.describe())

    def arg_syms(self) -> frozenset[ir.Sym]:
        return self._arg_syms

    def live_records(self, task: int | None = None) -> Iterator[Record]:
        """Records a sync of `task`'s threads can touch: those created in that task and those
        granted to every thread; all records when `task` is None (CPU scope, kernel ends).
        Only an access of task ι or an 𝔾-wide grant can put task ι's threads into a record."""
        keys = list(self.by_task) if task is None else [task, None]
        for key in keys:
            recs = self.by_task.get(key)
            if not recs:
                continue
            live = [r for r in recs if r.alive]
            self.by_task[key] = live
            yield from live

    def add_records(self, task: int | None, records: list[Record]) -> None:
        self.by_task.setdefault(task, []).extend(records)
        for rec in records:
            self.index.add(rec)

    def globalize(self) -> None:
        """After a kernel boundary every record holds 𝔾-wide grants."""
        merged = [r for recs in self.by_task.values() for r in recs if r.alive]
        self.by_task = {None: merged}

    # ------------------------------------------------------------ statements

    def block(self, stmts: tuple[ir.Stmt, ...], ctx: Ctx) -> None:
        allocated: list[ir.Alloc] = []
        for s in stmts:
            if isinstance(s, ir.Alloc):
                allocated.append(s)
            self.stmt(s, ctx)
        for a in reversed(allocated):
            self.free(a, ctx)

    def stmt(self, s: ir.Stmt, ctx: Ctx) -> None:
        match s:
            case ir.Pass() | ir.WindowStmt():
                pass
            case ir.Alloc(name=name, typ=typ, mem=mem):
                if isinstance(typ, ir.BarrierType):
                    self.declare_barrier(name, typ)
                else:
                    if isinstance(mem, Memory) and mem.is_smem and ctx.iters and \
                            ctx.dev is not None and ctx.dev.clusterDim > 1:
                        raise smem_below_cluster(name.name, mem, s.loc)
                    self.declare(name, typ, mem)
            case ir.Assign(buf=buf, idx=idx, rhs=rhs) | ir.Reduce(buf=buf, idx=idx, rhs=rhs):
                threads = self.collective(ctx)
                for r in data_reads(rhs):
                    self.access(r.buf, tuple(self.value(i) for i in r.idx), AccessKind.read,
                                self.scope_instr_tl(ctx), threads, r.loc, ctx)
                kind = AccessKind.write if isinstance(s, ir.Assign) else AccessKind.read_write
                self.access(buf, tuple(self.value(i) for i in idx), kind,
                            self.scope_instr_tl(ctx), threads, s.loc, ctx)
            case ir.If(cond=cond, body=body, orelse=orelse):
                self.block(body if self.value(cond) else orelse, ctx)
            case ir.For():
                self.loop(s, ctx)
            case ir.DeviceFunction():
                self.device_function(s, ctx)
            case ir.Warps(cfg=cfg, body=body):
                tiling, name = self.cached(s, lambda: collectives.tile_warps(
                    ctx.tiling, cfg, ctx.dev, ctx.warp_name))
                self.block(body, replace(ctx, tiling=tiling, warp_name=name))
            case ir.Fence(first=first, second=second):
                self.fence(self.collective(ctx), rules.SYNC_SETS[first],
                           rules.SYNC_SETS[second])
            case ir.Call():
                self.call(s, ctx)
            case ir.Arrive(targets=targets):
                barriers.arrive(self, s, self.collective(ctx), self.barriers[targets[0].buf])
            case ir.Await(target=target):
                barriers.await_(self, s, self.collective(ctx), self.barriers[target.buf])
            case _:
                raise UnhandledNode(s)

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
                    self.block(s.body, replace(ctx, tiling=tiling, iters=ctx.iters + ((s.iter, v),)))
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
        node: ir.Stmt = s.body[0]
        while isinstance(node, ir.For) and isinstance(node.mode, ir.CudaTasks):
            loops.append(node)
            node = node.body[0] if len(node.body) == 1 and isinstance(node.body[0], ir.For) \
                and isinstance(node.body[0].mode, ir.CudaTasks) else None  # type: ignore
            if node is None:
                break
        task_body = loops[-1].body
        dev = s.cfg
        top = collectives.top_tiling(dev)
        task_ids = itertools.count()
        self.current_dev_threads = dev.num_threads

        def nest(depth: int) -> None:
            if depth == len(loops):
                task = next(task_ids)
                self.block(task_body, Ctx(True, dev, task, top, dev.initial_warp_name(), ()))
                whole = Threads(task, frozenset(range(dev.num_threads)))
                for rec in self.live_records(task):
                    split = rec.join(whole)
                    if split is not None:
                        self.add_records(task, [split])
                    self.index.note_grants(rec)
                return
            loop = loops[depth]
            for v in range(self.value(loop.lo), self.value(loop.hi)):
                self.env[loop.iter] = v
                nest(depth + 1)
            self.env.pop(loop.iter, None)

        nest(0)
        for rec in self.live_records():
            split = rec.join(EVERYONE)
            if split is not None:
                self.add_records(None, [split])
            self.index.note_grants(rec)
        self.fence(EVERYONE, rules.KERNEL_SYNC, rules.KERNEL_SYNC)
        self.globalize()

    # ------------------------------------------------------------ sync

    def fence(self, threads: Threads, first: rules.SyncSets, second: rules.SyncSets) -> None:
        """SEM-5.3."""
        for rec in list(self.index.witness_candidates(threads, first)):
            target = self.witnessed_part(rec, threads, first)
            if target is not None:
                target.augment_full(threads, second)
                self.index.note_grants(target)

    def witnessed_part(self, rec: Record, threads: Threads, first: rules.SyncSets
                       ) -> Record | None:
        """The record (family split off if needed) that a sync of `threads` witnesses."""
        part = rec.witnessed(threads, first)
        if part is None:
            return None
        target = rec.split(part)
        if target is not rec:
            self.add_records(part.task, [target])
        return target

    # ------------------------------------------------------------ accesses

    def call(self, s: ir.Call, ctx: Ctx) -> None:
        if not isinstance(s.callee, Instr):
            raise Unsupported("not supported by spork-verify: call of a non-instr proc",
                              s.loc, code="ERR-V11", rule="LANG-3.10")
        if s.callee.unmodelled:
            raise Unsupported(f"not supported by spork-verify yet: instruction "
                              f"{s.callee.unmodelled}", s.loc, code="ERR-V11", rule="LANG-3.11")
        threads = self.collective(ctx)
        for k, acc in enumerate(instr_accesses(s, self.bufs_view(), self.value)):
            for index, by in self.owner_slices(s, k, acc, ctx, threads):
                self.access(acc.buf, index, acc.kind, s.callee.instr_tl, by, s.loc, ctx,
                            atomic_quals=acc.atomic_quals, in_instr=True)

    def owner_slices(self, s: ir.Call, k: int, acc: InstrAccess, ctx: Ctx, threads: Threads
                     ) -> Iterator[tuple[tuple[int, ...], Threads]]:
        """Each element of an instr access with the threads accessing it: the calling
        collective, or for an owner-only distributed window (COLL-5.12, SEM-4.3) the owner of
        its slice, as if the access sat in `cuda_threads` loops over the distributed dims."""
        dims = callee_distributed(acc.param, acc.window) if acc.param and acc.window and \
            acc.param.owner_only and ctx.cuda else ()
        if not dims:
            yield from ((index, threads) for index in acc.elements)
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
        lows = [self.value(d.interval.lo) for d in dims]
        by_slice: dict[tuple[int, ...], Threads] = {}
        for index in acc.elements:
            key = tuple(index[d.pos] - lo for d, lo in zip(dims, lows))
            if key not in by_slice:
                sub = replace(ctx, tiling=tiling, iters=ctx.iters + tuple(zip(syms, key)))
                by_slice[key] = self.collective(sub)
            yield index, by_slice[key]

    def bufs_view(self) -> Mapping[ir.Sym, tuple[tuple[int, ...], Memory]]:
        return {k: (b.shape, b.mem) for k, b in self.bufs.items()}

    def access(self, sym: ir.Sym, index: tuple[int, ...], kind: AccessKind, instr_tl: InstrTL,
               threads: Threads, loc: SrcLoc, ctx: Ctx,
               atomic_quals: frozenset[QualTL] = frozenset(), in_instr: bool = False) -> None:
        buf = self.bufs[sym]
        what = kind.value
        if len(index) != len(buf.shape) or any(not 0 <= i < n for i, n in zip(index, buf.shape)):
            later = self.origin(loc, what, ctx, threads)
            self.report(Finding(
                "out-of-bounds", f"OUT OF BOUNDS @ {sym.name}{list(index)} (shape "
                f"{list(buf.shape)})", sym.name, index, loc, later, None))
            return
        if not buf.tracked:
            return
        entry = rules.qual_entry(buf.mem.family, instr_tl, f"{sym.name} @ {buf.mem}")
        conv = rules.access_convergent(entry.q0, kind, in_instr, ctx.cuda,
                                       self.single(threads))
        self.check_and_record(sym, index, kind, entry, conv, entry.q0 in rules.OUT_OF_ORDER,
                              threads, loc, atomic_quals)

    def check_and_record(self, sym: ir.Sym, index: tuple[int, ...], kind: AccessKind,
                         entry: rules.QualEntry, conv: bool, ooo: bool, threads: Threads,
                         loc: SrcLoc, atomic_quals: frozenset[QualTL]) -> None:
        """SEM-4.5 checks against ρ(x, i), then SEM-4.4 records and SEM-2.6 lifecycle."""
        buf = self.bufs[sym]
        what = kind.value
        hist = buf.history.setdefault(index, History())
        later = self.origin(loc, what, None, threads)
        if kind is AccessKind.read:
            checks = [(m, Flag.full, False) for m in hist.mutates]
        else:
            flag = rules.mutate_flag(kind)
            checks = [(m, flag, False) for m in hist.mutates
                      if not (kind is AccessKind.atomic and m.atomic_quals & entry.extended)]
            checks += [(r, Flag.temp, True) for r in hist.reads]
        for rec, flag, earlier_is_read in checks:
            lacking = self.lacking(rec, threads, entry.extended, flag, conv)
            if lacking is not None:
                hk = rules.hazard_kind(kind, earlier_is_read).value
                self.report(Finding(
                    hk, f"{hk} HAZARD @ {sym.name}{list(index)}", sym.name, index, loc, later,
                    rec.origin, lacking=f"{lacking} lacks {flag.value} visibility on "
                    f"{{{', '.join(sorted(q.name for q in entry.extended))}}}"))
        new = self.new_records(threads, entry, conv, atomic_quals, later, ooo)
        self.add_records(None if atomic_quals else threads.task, new)
        for rec in new:
            rec.home = hist.reads if kind is AccessKind.read else hist.mutates
        if kind is AccessKind.read:
            hist.reads.extend(new)
            return
        for rec in hist.reads:
            rec.alive = False
        hist.reads.clear()
        if kind is AccessKind.atomic:
            hist.mutates.extend(new)
            return
        for rec in hist.mutates:
            rec.alive = False
        hist.mutates[:] = new

    @staticmethod
    def single(threads: Threads) -> bool:
        return threads.local is not None and len(threads.local) == 1

    def lacking(self, rec: Record, threads: Threads, quals: frozenset[QualTL], flag: Flag,
                conv: bool) -> str | None:
        """Vis (SEM-4.5); describes the threads lacking visibility, or None."""
        missing = rec.lacking(threads, quals, flag, conv)
        if missing is None:
            return None
        if missing.task is None:
            return "the CPU"
        ids = sorted(missing.local) if missing.local is not None else []
        if len(ids) == 1:
            return f"thread {ids[0]} of task {missing.task}"
        return f"{missing.describe()} (these threads)"

    def new_records(self, threads: Threads, entry: rules.QualEntry, conv: bool,
                    atomic_quals: frozenset[QualTL], origin: Origin, ooo: bool
                    ) -> list[Record]:
        """SEM-4.4: one record, or one per thread kept as a family."""
        flags = frozenset({Flag.issue}) if ooo else rules.ALL_FLAGS
        extra = {Grant(EVERYONE, atomic_quals, frozenset({Flag.atom}))} if atomic_quals else set()
        per_thread = not conv and threads.task is not None
        return [Record(threads, entry.q0, flags, per_thread, extra, set(), origin, atomic_quals)]

    def free(self, a: ir.Alloc, ctx: Ctx) -> None:
        """SEM-4.7: SMEM frees are non-atomic write-only mutates by the whole cluster."""
        bar = self.barriers.pop(a.name, None)
        if bar is not None:
            barriers.free_barrier(self, bar, a.loc)
        buf = self.bufs.pop(a.name, None)
        if buf is None or not buf.tracked or buf.mem.family not in ("smem", "mbarrier"):
            return
        threads = Threads(ctx.task, frozenset(range(self.current_dev_threads)))
        quals = frozenset({QualTL.cuda2})
        later = Origin(a.loc, "free", (), threads.describe())
        for hist in buf.history.values():
            for rec in hist.reads + hist.mutates:
                rec.alive = False
        for index in sorted(buf.history):
            hist = buf.history[index]
            checks = [(m, "WAW") for m in hist.mutates] + [(r, "WAR") for r in hist.reads]
            for rec, hk in checks:
                lacking = self.lacking(rec, threads, quals, Flag.temp, conv=False)
                if lacking is not None:
                    self.report(Finding(
                        hk, f"{hk} HAZARD @ free({a.name.name}{list(index)})", a.name.name,
                        index, a.loc, later, rec.origin,
                        lacking=f"{lacking} lacks temp visibility on {{cuda2}}",
                        sync_hint="a Fence at the scope of the allocation before it is freed"))


def run_machine(proc: ir.Proc, sizes: Mapping[str, int], collect_all: bool = False,
                stop_at: tuple[str, str | None, SrcLoc] | None = None
                ) -> tuple[bool, list[Finding]]:
    """Run at `sizes`; returns (preconditions hold, errors in trace order). With `stop_at`,
    a collect-all run ends at the first error with that (kind, variable, location)."""
    m = Machine(proc, sizes, collect_all, stop_at)
    if not m.preconditions_hold():
        return False, []
    return True, m.run()
