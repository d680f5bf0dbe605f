"""Static checks of stages A and L (language.md §9.3-9.4) and the site model for the encoder.

One walk over the IR with the collective tiling of every scope (verifier.collectives): device
function structure, loop-mode placement, tilings and one-thread writes here; allocations,
permissions, shapes and the access and free sites in `static_sites` (the walk's base class);
fences, calls and window statements in `static_calls`; barrier statements in `static_barriers` and
`barrier_exprs`. It records every access, fence and SMEM free as a site. Constructs outside the
verifiable fragment found while walking are either raised at once (`Unsupported`) or, when their
own static rules were checked, deferred until every static check has passed.
Non-goals: anything dynamic (hazards, bounds) — those are proof obligations.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

from verifier import collectives
from verifier.check import barrier_exprs, static_barriers, static_calls, static_data_rings, \
    static_rings, static_sm100
from verifier.check.sites import Context, Device, Element, Loop, ProgramModel, ReleaseSite
from verifier.check.static_packed import check_packed_shape, check_window_memory, \
    scalar_access_error
from verifier.check.static_sites import SiteRecorder, literal_int, located
from verifier.diagnostics import RejectedInput, SporkError, SrcLoc, UnhandledNode, Unsupported
from verifier.lang.ir import ir
from verifier.lang.ir.lifetimes import early_releases
from verifier.lang.ir.printer import expr_text, stmt_lines
from verifier.lang.rewrite.inline import inline_calls
from verifier.lang.stdlib.memories import CudaMbarrier, Memory
from verifier.lang.stdlib.timelines import InstrTL
from verifier.semantics import data_rings, ring_slots
from verifier.semantics.access import mutated_syms, walk_stmts
from verifier.semantics.exprs import data_reads
from verifier.semantics.rules import AccessKind


def uniform_write(buf: ir.Sym, mem: Memory, ctx: Context) -> None:
    """A scalar write of `CudaRmemUniform(n)` registers runs at `n * cuda_thread` scope, all n
    threads storing the group's value (upstream's rule; specs/dialects.md). Rules: COLL-2.6, DIAL-14"""
    assert ctx.device is not None and mem.native_unit is not None
    problem = collectives.matches_unit(ctx.tiling, mem.native_unit, ctx.device.cfg)
    if problem is not None:
        raise RejectedInput(f"{buf.name} @ {mem} must be written at {mem.params[0]} * "
                            f"cuda_thread scope: {problem}", code="ERR-A18", rule="COLL-2.6")


class Analyzer(SiteRecorder):
    def __init__(self, proc: ir.Proc) -> None:
        self.proc = proc
        self.model = ProgramModel(proc, tuple(a.name for a in proc.args
                                              if isinstance(a.typ, ir.Control)))
        self.mutated = mutated_syms(proc)
        self.free_exempt = ring_slots.synchronous_rings(proc)  # DIAL-12
        self.free_complete = data_rings.complete_at_free(proc.body)  # DIAL-20
        self.mems: dict[ir.Sym, Memory] = {}
        self.alloc_loops: dict[ir.Sym, tuple[ir.Sym, ...]] = {}
        self.alloc_ctx: dict[ir.Sym, Context] = {}
        # indexing pairs in program order, each marked whether an Await made it (COLL-5.14)
        self.uses: dict[ir.Sym, list[tuple[Any, list[object], bool]]] = {}
        self.alloc_site_loc: dict[ir.Sym, SrcLoc] = {}
        self.alloc_lists: dict[ir.Sym, tuple[ir.Stmt, ...]] = {}
        self.barrier_decls: dict[ir.Sym, Any] = {}
        self.barrier_uses: dict[ir.Sym, Any] = {}
        self.guard_taken: set[ir.Sym] = set()
        self.live_barriers: list[Any] = []
        # commit groups and those live at their declaration (LANG-5.21, checked at the end)
        self.commit_overlaps: list[tuple[Any, tuple[Any, ...]]] = []
        self.stack: list[ir.Stmt] = []  # statements enclosing the one being checked
        self.sync_uses: list[barrier_exprs.SyncUse] = []  # Arrives/Awaits in program order
        self.deferred: list[Unsupported] = []
        # the collective analysis as it was derived, for the debug log's `analysis` remark
        # (API-6): each scope's statement with its body tiling, each deduced distribution
        self.scopes: list[tuple[ir.Stmt, collectives.Tiling]] = []
        self.distributions: dict[ir.Sym, collectives.Distribution] = {}
        self.trailing_calls: list[ir.Call] = []  # instr calls with `>> z[...]` (LANG-5.18)
        self.elem_types: dict[ir.Sym, str] = {}
        self.commit_group_firsts: dict[ir.Sym, Any] = {}  # first Arrive's sync-tl (LANG-5.21)
        self.data_rings: dict[ir.Sym, static_data_rings.DataRing] = {}  # DIAL-18
        for s in walk_stmts(proc.body):
            if isinstance(s, ir.Arrive) and s.targets:
                self.commit_group_firsts.setdefault(s.targets[0].buf, s.first)
        # Errors of rules upstream checks after distributed memory deduction (one-thread
        # writes, fence collectives, memory shapes): reported after it, so a program breaking
        # both gets upstream's first message; the walk goes on with the statement recorded.
        self.later: list[RejectedInput] = []
        self.next_id = 0
        self.early = {id(r.alloc): r for r in early_releases(proc.body)}  # CG-R1 candidates
        for a in proc.args:
            if not isinstance(a.typ, ir.Control):
                if isinstance(a.typ, ir.Tensor) and a.typ.window:
                    check_window_memory(a.name.name, a.mem, a.loc)
                self.elem_types[a.name] = ir.element_type(a.typ) or ""
                self.mems[a.name] = a.mem
                self.alloc_loops[a.name] = ()
                if isinstance(a.typ, ir.Tensor):
                    self.model.shapes[a.name] = a.typ.shape
                else:
                    self.model.shapes[a.name] = ()

    def defer(self, e: Unsupported) -> None:
        """A construct outside the verifiable fragment whose static rules hold: reported after
        every static check passed, so a static error anywhere comes first (exit 2 before 3)."""
        self.deferred.append(e)

    # ------------------------------------------------------------ walk

    def run(self) -> ProgramModel:
        self.block(self.proc.body, Context())
        static_barriers.finish(self)
        self.distributed_memory()
        if self.later:
            raise min(self.later, key=lambda e: (e.loc.line, e.loc.col))
        barrier_exprs.check_collectives(self)
        static_rings.arrive_counts(self)
        if self.deferred:
            raise min(self.deferred, key=lambda e: (e.loc.line, e.loc.col))
        return self.model

    def distributed_memory(self) -> None:
        """COLL-5: deduce the distributed dimensions of every CUDA allocation from its uses."""
        for sym, ctx in self.alloc_ctx.items():
            mem = self.mems[sym]
            is_barrier = sym in self.barrier_decls
            if ctx.device is None or (mem.native_unit is None and not is_barrier):
                continue
            decl = self.barrier_decls.get(sym)
            # an endgame ring: its ring dimension is never distributed, its shards are CTAs'
            # (DIAL-2, DIAL-5), one deduction over both sides as upstream endgame's
            shape = static_rings.without_ring(decl, self.model.shapes[sym])
            dims = [d.value if isinstance(d, ir.Const) else _text_dim(d) for d in shape]
            native = static_rings.native_unit(decl) if is_barrier else mem.native_unit
            uses = [(t, idx) for t, idx, _ in self.uses.get(sym, [])]
            try:
                if is_barrier and decl.mech is CudaMbarrier and decl.ring is None:
                    # COLL-5.14 (upstream dev26): the Arrive side (with TMA trailing
                    # barriers) and the Await side are deduced apart, then must agree on
                    # every CTA-in-cluster index
                    sides = [[(t, idx) for t, idx, aw in self.uses.get(sym, []) if aw == side]
                             for side in (False, True)]
                    dist, other = (collectives.deduce_distribution(
                        ctx.tiling, None, side, dims, ctx.device.cfg, name=sym.name)
                        for side in sides)
                    if all(sides):
                        collectives.roles_agree(dist, other, name=sym.name)
                else:
                    dist = collectives.deduce_distribution(ctx.tiling, native, uses, dims,
                                                           ctx.device.cfg, name=sym.name)
            except SporkError as e:
                raise located(e, self.alloc_site_loc[sym]) from None
            self.distributions[sym] = dist
            check_packed_shape(sym.name, mem, self.elem_types.get(sym, ""), shape[dist.R:],
                               self.alloc_site_loc[sym])
            if mem.is_register and any(literal_int(d) is None for d in shape[dist.R:]):
                # COLL-5.8: the shard (the dims left after the distributed ones) is the
                # register allocation, and it must have a constant shape (LANG-6.3)
                raise RejectedInput(f"{sym.name} @ {self.mem_text(mem)} requires constant "
                                    f"shape. Saw: [{', '.join(expr_text(d) for d in shape)}]; "
                                    "simplify() if needed", self.alloc_site_loc[sym],
                                    code="ERR-A16",
                                    rule="LANG-6.3", variable=sym.name)

    def note_use(self, sym: ir.Sym, ctx: Context, idx: tuple[Any, ...], *,
                 awaits: bool = False) -> None:
        """One indexing pair (COLL-5.3); an Await's is kept apart (COLL-5.14)."""
        if sym not in self.alloc_ctx or not ctx.cuda:
            return
        entries: list[object] = []
        for e in idx:
            if isinstance(e, ir.Interval):
                entries.append(None)
                continue
            pt = e.pt if isinstance(e, ir.Point) else e
            if isinstance(pt, ir.Var):
                entries.append(pt.name)
            else:
                entries.append(collectives.NotAVariable(expr_text(pt)))
        self.uses.setdefault(sym, []).append((ctx.tiling, entries, awaits))

    def block(self, stmts: tuple[ir.Stmt, ...], ctx: Context) -> None:
        allocs: list[ir.Alloc] = []
        for i, s in enumerate(stmts):
            sub = replace(ctx, path=ctx.path + (i,))
            try:
                self.stmt(s, sub)
            except SporkError as e:
                raise located(e, s.loc) from None
            if isinstance(s, ir.Alloc):
                allocs.append(s)
                self.alloc_lists[s.name] = stmts
        end = replace(ctx, path=ctx.path + (len(stmts),))
        for a in reversed(allocs):
            if isinstance(a.typ, ir.BarrierType):
                static_barriers.release(self, a, end)
            site = self.free_site(a, end, a.loc, some_thread=a.name in self.free_complete)
            if site is not None:
                self.model.accesses.append(site)
            early = self.early.get(id(a))
            if site is not None and early is not None and early.block is stmts and \
                    not site.mem.sync_exempt:  # exempt accesses are not tracked: no release
                # CG-R1: the same free, just after statement index-1 (a path no statement
                # has, so every comparison with a site of the block is strict)
                at = replace(ctx, path=ctx.path + (early.index - 1, sys.maxsize))
                release = self.free_site(a, at, early.before.loc,
                                         -1 - len(self.model.releases))
                assert release is not None
                self.model.releases.append(ReleaseSite(early.id, release))

    def stmt(self, s: ir.Stmt, ctx: Context) -> None:
        self.stack.append(s)
        try:
            self.stmt_cases(s, ctx)
        finally:
            self.stack.pop()

    def stmt_cases(self, s: ir.Stmt, ctx: Context) -> None:
        match s:
            case ir.Pass():
                pass
            case ir.WindowStmt():
                check_window_memory(s.name.name, self.mems.get(s.rhs.buf), s.loc)
                static_calls.window_stmt(self, s, ctx)
            case ir.Alloc():
                self.alloc(s, ctx)
            case ir.Assign(buf=buf, idx=idx, rhs=rhs) | ir.Reduce(buf=buf, idx=idx, rhs=rhs):
                self.scalar_stmt(s, buf, idx, rhs, ctx)
            case ir.If(cond=cond, body=body, orelse=orelse):
                self.check_control(cond)
                self.block(body, replace(ctx, conds=ctx.conds + ((cond, True),),
                                         path=ctx.path + (0,)))
                self.block(orelse, replace(ctx, conds=ctx.conds + ((cond, False),),
                                           path=ctx.path + (1,)))
            case ir.For():
                self.loop(s, ctx)
            case ir.DeviceFunction():
                self.device_function(s, ctx)
            case ir.Warps(cfg=cfg, body=body):
                if not ctx.cuda:
                    raise RejectedInput("cannot have with CudaWarps outside CUDA device function",
                                        s.loc, code="ERR-A22", rule="LANG-4.14")
                assert ctx.device is not None
                tiling, name = collectives.tile_warps(ctx.tiling, cfg, ctx.device.cfg,
                                                      ctx.warp_name)
                self.scopes.append((s, tiling))
                self.block(body, replace(ctx, tiling=tiling, warp_name=name))
            case ir.Fence():
                try:
                    static_calls.fence(self, s, ctx)
                except RejectedInput as e:
                    if e.code != "ERR-L02":
                        raise
                    self.later.append(located(e, s.loc))
            case ir.Call():
                static_calls.call(self, s, ctx)
            case ir.Arrive():
                static_barriers.arrive(self, s, ctx)
            case ir.Await():
                static_barriers.await_(self, s, ctx)
            case _:
                raise UnhandledNode(s)

    def check_control(self, e: ir.Expr) -> None:
        reads = [r for r in _walk_expr(e) if isinstance(r, (ir.Read, ir.Window, ir.Stride))]
        if reads:
            raise Unsupported("not supported by spork-verify: data-dependent control value",
                              reads[0].loc, code="ERR-V11", rule="LANG-2.7")

    # ------------------------------------------------------------ structure

    def device_function(self, s: ir.DeviceFunction, ctx: Context) -> None:
        if ctx.cuda:
            raise RejectedInput(f"{s.cfg.call_text()} requires cpu_basic_device (a device "
                                "function cannot be nested in CUDA code)", s.loc,
                                code="ERR-A06", rule="LANG-4.5")
        if len(s.body) != 1:
            raise RejectedInput("Invalid cuda_tasks loop, expected cuda_tasks loop alone in "
                                "CudaDeviceFunction", s.loc,
                                code="ERR-A13", rule="LANG-4.6")
        loops: list[ir.For] = []
        node: ir.Stmt = s.body[0]
        while True:
            if not (isinstance(node, ir.For) and isinstance(node.mode, ir.CudaTasks)):
                if not loops:
                    raise RejectedInput("Invalid cuda_tasks loop, not a cuda_tasks loop",
                                        node.loc, code="ERR-A13", rule="LANG-4.6")
                break
            loops.append(node)
            if len(node.body) == 1 and isinstance(node.body[0], ir.For) and \
                    isinstance(node.body[0].mode, ir.CudaTasks):
                node = node.body[0]
            else:
                break
        names = [lp.iter.name for lp in loops]
        if len(set(names)) != len(names):
            raise RejectedInput("Invalid cuda_tasks loop, duplicate cuda_tasks iter variable "
                                f"name {next(n for n in names if names.count(n) > 1)}",
                                s.loc,
                                code="ERR-A13", rule="LANG-4.6")
        task_syms = {lp.iter for lp in loops}
        for lp in loops:
            self.check_control(lp.lo)
            self.check_control(lp.hi)
            used = {v.name for v in _walk_expr(lp.lo) if isinstance(v, ir.Var)} | \
                {v.name for v in _walk_expr(lp.hi) if isinstance(v, ir.Var)}
            if used & task_syms:
                dep = sorted(sym.name for sym in used & task_syms)[0]
                raise RejectedInput(
                    "Invalid cuda_tasks loop, non-cuboid cuda_tasks loop nest unimplemented; "
                    f"for {lp.iter.name} in cuda_tasks({expr_text(lp.lo)}, {expr_text(lp.hi)}) "
                    f"has dependence on {dep} iterator of previous cuda_tasks loop", lp.loc,
                    code="ERR-A13", rule="LANG-4.6")
        device = Device(len(self.model.devices), s.cfg, tuple(lp.sym for lp in ctx.loops),
                        tuple(lp.iter for lp in loops), s.loc)
        self.model.devices.append(device)
        inner = replace(ctx, device=device, tiling=collectives.top_tiling(s.cfg),
                        path=ctx.path + (0,), warp_name=s.cfg.initial_warp_name())
        self.scopes.append((s, inner.tiling))
        for depth, lp in enumerate(loops):
            inner = replace(inner, loops=inner.loops + (
                Loop(lp.iter, lp.lo, lp.hi, "task", lp.loc),), path=inner.path + (0,) * (depth > 0))
        self.block(loops[-1].body, replace(inner, path=inner.path + (0,)))

    def loop(self, s: ir.For, ctx: Context) -> None:
        self.check_control(s.lo)
        self.check_control(s.hi)
        match s.mode:
            case ir.CudaTasks():
                raise RejectedInput("Invalid cuda_tasks loop, must appear only in top level nest "
                                    "of CudaDeviceFunction", s.loc, code="ERR-A13",
                                    rule="LANG-4.6")
            case ir.Par():
                if ctx.cuda:
                    raise RejectedInput("unexpected loop mode par in CudaDeviceFunction", s.loc,
                                        code="ERR-A14", rule="LANG-4.7")
                raise Unsupported("not supported by spork-verify: par loops", s.loc,
                                  code="ERR-V11", rule="LANG-4.11")
            case ir.Seq():
                body_ctx = replace(ctx, loops=ctx.loops + (Loop(s.iter, s.lo, s.hi, "seq", s.loc),))
            case ir.CudaThreads(unit=unit):
                if not ctx.cuda:
                    raise RejectedInput(f"unexpected loop mode cuda_threads in {s.iter.name} loop: "
                                        "cannot have cuda_threads loop outside CUDA device "
                                        "function", s.loc, code="ERR-A14", rule="LANG-4.9")
                lo, hi = literal_int(s.lo), literal_int(s.hi)
                if lo != 0:
                    raise RejectedInput(f"expected 0 for lo of {s.iter.name} loop (rewrite with "
                                        "simplify(...) if needed)", s.lo.loc, code="ERR-A20",
                                        rule="LANG-4.10")
                if hi is None:
                    raise RejectedInput(f"expected literal int value for hi of {s.iter.name} loop "
                                        "(rewrite with simplify(...) if needed)", s.hi.loc,
                                        code="ERR-A20", rule="LANG-4.10")
                if hi < 1:
                    raise RejectedInput(f"hi must be ≥ 1 for cuda_threads loop {s.iter.name} "
                                        f"(got {hi})", s.hi.loc, code="ERR-A20", rule="LANG-4.10")
                assert ctx.device is not None
                tiling = collectives.tile_threads(ctx.tiling, s.iter, s.iter.name, 0, hi, unit,
                                                  ctx.device.cfg)
                self.scopes.append((s, tiling))
                body_ctx = replace(ctx, loops=ctx.loops + (Loop(s.iter, s.lo, s.hi, "threads",
                                                                s.loc),),
                                   tiling=tiling, thread_iters=ctx.thread_iters + (s.iter,))
            case _:
                raise UnhandledNode(s)
        self.block(s.body, body_ctx)


    def scalar_stmt(self, s: ir.Assign | ir.Reduce, buf: ir.Sym, idx: tuple[ir.Expr, ...],
                    rhs: ir.Expr, ctx: Context) -> None:
        instr_tl = InstrTL.cuda_in_order_instr if ctx.cuda else InstrTL.cpu_in_order_instr
        for i in idx:
            self.check_control(i)
        reads = data_reads(rhs)
        for k, r in enumerate(reads):
            for i in r.idx:
                self.check_control(i)
            self.later.extend(filter(None, [scalar_access_error(
                r.buf.name, self.mems.get(r.buf), "read", r.loc)]))
            self.check_rank(r.buf, len(r.idx), r.loc)
            self.note_use(r.buf, ctx, r.idx)
            self.record_access(r.buf, Element(r.idx, tuple(None for _ in r.idx)),
                               AccessKind.read, instr_tl, ctx, r.loc, k, False)
        self.later.extend(filter(None, [scalar_access_error(
            buf.name, self.mems.get(buf), "write" if isinstance(s, ir.Assign) else "reduce",
            s.loc)]))
        self.check_rank(buf, len(idx), s.loc)
        self.note_use(buf, ctx, idx)
        kind = AccessKind.write if isinstance(s, ir.Assign) else AccessKind.read_write
        mem = self.mems.get(buf)
        uniform = mem is not None and mem.name == "CudaRmemUniform" and mem.params[0] > 1
        self.record_access(buf, Element(idx, tuple(None for _ in idx)), kind, instr_tl, ctx,
                           s.loc, len(reads), False, single_thread=not uniform)
        if ctx.cuda:
            assert ctx.device is not None
            try:
                if uniform:
                    assert mem is not None
                    uniform_write(buf, mem, ctx)  # endgame: one value per n-thread group
                else:
                    collectives.one_thread(ctx.tiling, ctx.device.cfg)
            except RejectedInput as e:
                if mem is not None:  # which memory the write targets, as upstream names it
                    e.message += f" (a write of {buf.name} @ {mem})"
                e.message += f"\nstmt: {stmt_lines(s, 0)[0].strip()}"
                self.later.append(located(e, s.loc))

def _text_dim(d: ir.Expr) -> object:
    """A non-constant extent for distributed memory deduction, named by its text."""
    return collectives.NotAVariable(expr_text(d))



def _walk_expr(e: Any) -> list[Any]:
    out = [e]
    match e:
        case ir.BinOp(lhs=lhs, rhs=rhs):
            out += _walk_expr(lhs) + _walk_expr(rhs)
        case ir.USub(arg=arg):
            out += _walk_expr(arg)
        case ir.Read(idx=idx):
            for i in idx:
                out += _walk_expr(i)
        case _:
            pass
    return out


def analyze(proc: ir.Proc, seen: list[Analyzer] | None = None) -> ProgramModel:
    """Run every static check; the site model on success. Raises RejectedInput/Unsupported.
    Calls of procs are inlined first (CALL-1): the model's proc is the inlined one. `seen`
    receives the analyzer, whose collective analysis outlives a failure (API-6)."""
    inlined = inline_calls(proc)
    analyzer = Analyzer(inlined)
    if seen is not None:
        seen.append(analyzer)
    static_sm100.cta_groups(inlined)
    model = analyzer.run()
    static_sm100.tmem_allocations(inlined)
    return model
