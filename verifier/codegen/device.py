"""CUDA text of a device task: the statements inside the innermost `cuda_tasks` loop.

Reads a `DevicePlan` (tilings, distributions, SMEM offsets) and the `Env` of the kernel (how the
task reaches captured CPU values and task iterators); produces the body lines of one
`exo_deviceTask<cname>` function per warp name. Thread loops and `CudaWarps` blocks become the
guarded blocks of COLL-4.3 with the collectives' guard text; fences follow SEM-8.1.
Split barriers without storage (commit groups, cluster sync) follow SEM-8.3/8.4; mbarrier
Arrives and Awaits use the ring slot of the per-thread `exo_syncState` (SEM-8.5).
Non-goals: wgmma fences.
"""

from __future__ import annotations

from math import prod

from verifier import collectives
from verifier.codegen import mbarrier_text as mbarrier
from verifier.codegen import sm100
from verifier.codegen import tk, tk_wgmma
from verifier.codegen.barriers import COMMIT_GROUP_ROWS, arrive_lines, await_lines
from verifier.codegen.exprs import Env, View, cexpr, dense_strides, window_view
from verifier.codegen.instrs import lower_device_call
from verifier.codegen import mbarrier_indexed as indexed_ring
from verifier.codegen.mbarrier import MbarrierRing
from verifier.codegen.mbarrier_indexed import IndexedRing
from verifier.codegen.names import Namer, ctype_of
from verifier.codegen.plan import DevicePlan, smem_swizzle
from verifier.codegen.tma import TMA_ROWS, lower_tma
from verifier.codegen.wgmma import accum_type, fence_accumulators
from verifier.collectives import Tiling
from verifier.diagnostics import InternalError, SporkError, SrcLoc, UnhandledNode, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.cuda_tk import TkTile, TkVec
from verifier.lang.stdlib.memories import Memory
from verifier.lang.ir.printer import expr_text
from verifier.lang.stdlib.timelines import SYNC_SETS, QualTL, SyncTL, implements

def _ref_text(ref: ir.BarrierRef) -> str:
    """`z` or `z[i, j]`, for comments."""
    if not ref.idx:
        return ref.buf.name
    idx = [expr_text(a.pt) if isinstance(a, ir.Point) else ":" for a in ref.idx]
    return f"{ref.buf.name}[{', '.join(idx)}]"


def needs_wait_all(first: SyncTL) -> bool:
    """`cp.async.wait_all` iff τ1 contains Sm80 (τ1 ⋢ cuda_in_order). Rules: SEM-8.1"""
    return QualTL.Sm80 in SYNC_SETS[first].full


def needs_proxy_fence(first: SyncTL, second: SyncTL) -> bool:
    """`fence.proxy.async` iff τ1.F ≠ ∅ and τ2 grants async. Placed after the barrier on every
    thread of the scope (CG-S1: the fence then lies on the causality path from each write to the
    async access). Rules: SEM-8.1, SEM-8.3, CG-S1"""
    return bool(SYNC_SETS[first].full) and QualTL.async_ in SYNC_SETS[second].full


CTA_BARRIER = 'asm volatile("barrier.cta.sync 0;" ::: "memory");'
CLUSTER_BARRIER = ('asm volatile("barrier.cluster.arrive.aligned;\\n\\t"'
                   ' "barrier.cluster.wait.aligned;" ::: "memory");')


def fence_lines(first: SyncTL, second: SyncTL, scope: str,
                loc: SrcLoc | None) -> list[str]:
    """SEM-8.1: [tcgen05.fence::before_thread_sync] [cp.async.wait_all] barrier-for-scope
    [fence.proxy.async] [tcgen05.fence::after_thread_sync] (the tcgen05 fences for the sync-tls
    of BW-3.3, BW-3.4); SEM-8.2: `Fence(wgmma_fence_1, wgmma_fence_2)` (a warpgroup) is
    `wgmma.fence`. Rules: SEM-8.1, SEM-8.2, BW-CG-7"""
    if first == SyncTL.wgmma_fence_1 or second == SyncTL.wgmma_fence_2:
        if (first, second) != (SyncTL.wgmma_fence_1, SyncTL.wgmma_fence_2):
            raise InternalError(f"Fence({first}, {second}) is not a wgmma fence", loc)
        return [f"// Fence({first}, {second}): warpgroup",
                'asm volatile("wgmma.fence.sync.aligned;" ::: "memory");']
    before = first is SyncTL.tcgen05_before_thread_sync
    after = second is SyncTL.tcgen05_after_thread_sync
    if not (before or implements(first, SyncTL.Sm80_generic)) or \
            not (after or implements(second, SyncTL.cuda_generic_and_async_proxy)):
        raise InternalError(f"Fence({first}, {second}) is not a legal garden-variety fence",
                            loc)
    lines = [f"// Fence({first}, {second}): {scope} scope"]
    if before:  # BW-CG-7
        lines.append(sm100.FENCE_BEFORE)
    if needs_wait_all(first):
        lines.append('asm volatile("cp.async.wait_all;" ::: "memory");')
    match scope:
        case "thread":
            pass
        case "warp":
            lines.append("__syncwarp();")
        case "cta":
            lines.append(CTA_BARRIER)
        case "cluster":
            lines.append(CLUSTER_BARRIER)
        case _:
            raise InternalError(f"unknown fence scope {scope!r}")
    if needs_proxy_fence(first, second):
        lines.append('asm volatile("fence.proxy.async;" ::: "memory");')
    return lines + ([sm100.FENCE_AFTER] if after else [])


def alloc_view(s: ir.Alloc, plan: DevicePlan, cname: str) -> tuple[list[str], View]:
    """Declaration and view of a CUDA allocation of the shard shape. Rules: LANG-8.6, COLL-5.8"""
    mem = s.mem
    assert isinstance(mem, Memory)
    base = ir.element_type(s.typ) or ""
    ctype = ctype_of(base)
    shard = plan.shards[s.name]
    drop = plan.drops[s.name]
    dims = [str(d) for d in shard]
    if sm100.is_tmem(mem):
        return sm100.tmem_view(s, shard, drop, plan.smem_offsets[s.name], cname,
                               ctype)
    if sm100.is_tile(mem):
        return sm100.tile_view(s, shard, drop, cname, ctype)
    match mem.family:
        case "smem":
            offset = plan.smem_offsets[s.name]
            swizzle = plan.relaid.get(s.name, 0) or smem_swizzle(mem)  # BW-CG-11
            decl = (f"[[maybe_unused]] {ctype}* const {cname} = "
                    f"reinterpret_cast<{ctype}*>(exo_smem + {offset});")
            if not shard:
                base = f"(*exo_swizzled<{swizzle}>({cname}))" if swizzle else f"{cname}[0]"
                return [decl], View(ctype, base, (), drop, True, 0, mem.family)
            return [decl], View(ctype, cname, dense_strides(dims), drop, False, 0, mem.family,
                                swizzle=swizzle)
        case "rmem_wgmma_d":
            accum = accum_type(mem.params, shard, s.name.name, s.loc)
            lead = [str(d) for d in shard[:-2]]
            count = prod(shard[:-2])
            return ([f"{accum} {cname}[{count}];"],
                    View(accum, cname, dense_strides(lead), drop, False, 1, mem.family,
                         str(count)))
        case "rmem":
            if not shard:
                return [f"{ctype} {cname};"], View(ctype, cname, (), drop, True, 0, mem.family)
            return ([f"{ctype} {cname}[{prod(shard)}];"],
                    View(ctype, cname, dense_strides(dims), drop, False, 0, mem.family))
        case "rmem_matrix":
            if len(shard) < 2 or (shard[-1] * shard[-2]) % 32:
                raise InternalError(f"{s.name.name}: fragment shape {shard}", s.loc)
            regs = shard[-1] * shard[-2] // 32
            lead = [str(d) for d in shard[:-2]]
            strides = tuple(str(int(st) * regs) for st in dense_strides(lead))
            count = prod(shard[:-2]) * regs
            return ([f"{ctype} {cname}[{count}];"],
                    View(ctype, cname, strides, drop, False, regs, mem.family))
        case "rmem_tk" | "rmem_tk_a" | "rmem_tk_d":
            assert isinstance(mem, (TkTile, TkVec))
            return tk.alloc(mem, base, tuple(int(d) for d in shard), drop, cname)
        case _:
            raise Unsupported(f"codegen of {mem} allocations is not supported yet", s.loc,
                              code="ERR-V11", rule="LANG-8.6")


def _accumulators(env: Env) -> list[View]:
    """The wgmma accumulator allocations in scope (whole allocations, not windows)."""
    return [v for v in env.views.values() if v.family == "rmem_wgmma_d" and v.elems]


class TaskEmitter:
    """Emits the device task for one warp name (`warp` None: no named-warp filtering)."""

    def __init__(self, plan: DevicePlan, namer: Namer, warp: str | None) -> None:
        self.plan = plan
        self.namer = namer
        self.warp = warp
        self.aliases = 0
        self.cta_group = sm100.cta_group(plan.stmt)  # of its tcgen05 instrs (BW-CG-9)
        self.tmem_columns = sm100.kernel_columns(plan.stmt)  # every allocation's (BW-CG-2)

    def block(self, stmts: tuple[ir.Stmt, ...], env: Env, tiling: Tiling,
              depth: int) -> list[str]:
        env = env.child()
        out: list[str] = []
        for s in stmts:
            try:
                out += self.stmt(s, env, tiling, depth)
            except SporkError as err:
                if err.loc is None or err.loc.line == 0:
                    err.loc = s.loc
                raise
        return out

    def stmt(self, s: ir.Stmt, env: Env, tiling: Tiling, depth: int) -> list[str]:
        pad = "    " * depth
        match s:
            case ir.Pass():
                return []
            case ir.Alloc(name=name, typ=ir.BarrierType(mech=mech)) if name in self.plan.indexed:
                indexed = self.plan.indexed[name]
                proxy = mbarrier.uses_async_proxy(self.plan.stmt.body)
                return [pad + f"// {name.name}: barrier @ {mech}: ring of depth "
                        f"{indexed.ring.depth} at exo_smem + {indexed.ring.offset}, initialised "
                        "for this allocation (DIAL-13)"] + \
                    [pad + line for line in indexed_ring.init_lines(indexed, proxy)]
            case ir.Alloc(name=name, typ=ir.BarrierType(mech=mech)):
                ring = self.plan.rings.get(name)
                if ring is not None:
                    return [pad + f"// {name.name}: barrier @ {mech}: {ring.slices} x ring of "
                            f"depth {ring.depth} at exo_smem + {ring.offset} (exo_deviceSetup)"]
                return [pad + f"// {name.name}: barrier @ {mech} (no storage)"]
            case ir.Alloc(name=name):
                lines, view = alloc_view(s, self.plan, self.namer(name))
                env.views[name] = view
                if self.warp is not None and view.family not in ("smem", sm100.TMEM_FAMILY):
                    # Each named warp's task function declares every task-level allocation; a
                    # register allocation used only by another warp's code would draw nvcc's
                    # "declared but never referenced" warning.
                    lines = ["[[maybe_unused]] " + line for line in lines]
                return [pad + line for line in lines]
            case ir.Assign(buf=buf, idx=idx, rhs=rhs) | ir.Reduce(buf=buf, idx=idx, rhs=rhs):
                view = env.view(buf)
                lhs = view.element([cexpr(i, env) for i in idx], s.loc)
                op = "=" if isinstance(s, ir.Assign) else "+="
                return [pad + f"{lhs} {op} {cexpr(rhs, env, view.ctype)};"]
            case ir.WindowStmt(name=name, rhs=rhs):
                if rhs.buf in env.tmaps and rhs.buf not in env.views:
                    return []  # CG-T1: a window of a tensor-map parameter; TMAs name the map
                env.views[name] = window_view(rhs, env)
                return []
            case ir.If(cond=cond, body=body, orelse=orelse):
                out = [pad + f"if ({cexpr(cond, env)}) {{"]
                out += self.block(body, env, tiling, depth + 1)
                if orelse:
                    out += [pad + "} else {"] + self.block(orelse, env, tiling, depth + 1)
                return out + [pad + "}"]
            case ir.For(mode=ir.Seq()):
                return self.seq_loop(s, env, tiling, depth)
            case ir.For(iter=it, mode=ir.CudaThreads(), body=body):
                inner = self.plan.tiling(s)
                out, guard_env = self.guards(tiling, inner, env, depth, it)
                out += self.block(body, guard_env, inner, depth + 1)
                return out + [pad + "}"]
            case ir.Warps(body=body):
                return self.warps(s, env, tiling, depth)
            case ir.Call():
                return [pad + line for line in self.call(s, env)]
            case ir.Fence(first=first, second=second) if sm100.is_wait(first):
                lines = sm100.wait_lines(first, self.plan.tiling(s), self.plan.dev, env, s.loc)
                return [pad + f"// Fence({first}, {second}): tcgen05.wait"] + \
                    [pad + line for line in lines]
            case ir.Fence(first=first, second=second):
                wgmma = first == SyncTL.wgmma_fence_1
                scope = "warpgroup" if wgmma else \
                    collectives.fence_scope(self.plan.tiling(s), self.plan.dev)
                lines = fence_lines(first, second, scope, s.loc)
                if wgmma:  # the tiles' register writes land before wgmma.fence (TK-CG-5)
                    lines[1:1] = tk_wgmma.pin_lines(list(env.views.values()))
                return [pad + line for line in lines]
            case ir.Arrive(first=first, targets=targets):
                ref = targets[0]
                mech = self.plan.barriers[ref.buf]
                if first is SyncTL.tcgen05_commit and ref.buf not in self.plan.rings:
                    raise Unsupported("tcgen05.commit is lowered onto a February-dialect "
                                      "CudaMbarrier ring only", s.loc, code="ERR-L06",
                                      rule="BW-CG-4")
                if ref.buf in self.plan.indexed:
                    indexed = self.plan.indexed[ref.buf]
                    idx, y = self.indexed_index(indexed, targets, env)
                    lines = indexed_ring.arrive_lines(indexed, idx, y, self.plan.dev.clusterDim)
                elif ref.buf in self.plan.rings:
                    ring = self.plan.rings[ref.buf]
                    lines = mbarrier.arrive_lines(ring, self.namer(ref.buf),
                                                  self.ring_index(ring, targets, env),
                                                  self.plan.dev.clusterDim, first,
                                                  self.cta_group)
                else:
                    lines = arrive_lines(mech, first, needs_wait_all(first), s.loc)
                shown = " >> ".join(_ref_text(t) for t in targets)
                return [pad + f"// Arrive({first}) >> {shown}"] + [pad + line for line in lines]
            case ir.Await(target=target, second=second, n=n):
                mech = self.plan.barriers[target.buf]
                first = self.plan.arrive_first.get(target.buf)
                proxy = first is not None and needs_proxy_fence(first, second)
                if target.buf in self.plan.indexed:
                    indexed = self.plan.indexed[target.buf]
                    idx, y = self.indexed_index(indexed, (target,), env)
                    lines = indexed_ring.await_lines(indexed, idx, y, proxy)
                elif target.buf in self.plan.rings:
                    ring = self.plan.rings[target.buf]
                    lines = mbarrier.await_lines(ring, self.namer(target.buf),
                                                 self.ring_index(ring, (target,), env), proxy,
                                                 s.loc)
                else:
                    lines = await_lines(mech, first, n, proxy, s.loc)
                    if first is not None and COMMIT_GROUP_ROWS.get(first) == \
                            COMMIT_GROUP_ROWS[SyncTL.wgmma_async]:
                        lines += fence_accumulators(_accumulators(env))
                        lines += tk_wgmma.pin_lines(list(env.views.values()))  # TK-CG-5
                if second is SyncTL.tcgen05_after_thread_sync:  # BW-CG-7
                    lines.append(sm100.FENCE_AFTER)
                shown = f"~{~n}" if n < 0 else str(n)
                return [pad + f"// Await({_ref_text(target)}, {second}, {shown})"] + \
                    [pad + line for line in lines]
            case ir.For() | ir.DeviceFunction():
                raise InternalError("cuda_tasks/par loop or device function in a device task",
                                    s.loc)
            case _:
                raise UnhandledNode(s)

    @staticmethod
    def home_index(refs: tuple[ir.BarrierRef, ...], env: Env) -> list[str]:
        """C text of the home element's indices: per dimension the point some expression
        gives (LANG-5.6); "0" where every expression has an interval (a CTA axis, not part
        of the per-CTA slice)."""
        out = []
        for k in range(len(refs[0].idx)):
            points = [r.idx[k].pt for r in refs if isinstance(r.idx[k], ir.Point)]
            out.append(cexpr(points[0], env) if points else "0")
        return out

    def ring_index(self, ring: MbarrierRing, refs: tuple[ir.BarrierRef, ...],
                   env: Env) -> list[str]:
        """C text of the per-CTA slice digits of an mbarrier expression: its indices, then
        the enclosing iterators of the allocation. Rules: COLL-5.11"""
        return mbarrier.index_digits(ring, self.home_index(refs, env), env.ctrl, refs[0].loc)

    def indexed_index(self, r: IndexedRing, refs: tuple[ir.BarrierRef, ...], env: Env
                      ) -> tuple[list[str], str]:
        """C text of an endgame ring expression: its per-CTA slice digits and its ring index.
        Rules: DIAL-13, COLL-5.11"""
        home = self.home_index(refs, env)
        return [home[k] for k in r.local], home[r.ring_dim]

    def call(self, s: ir.Call, env: Env) -> list[str]:
        """An instruction; a TMA gets its kernel-side tensor map and the slot of its trailing
        mbarrier. Rules: LANG-8.7, SEM-8.6"""
        name = getattr(s.callee, "name", "")
        if name in sm100.ALLOCATORS and isinstance(s.args[0], ir.Window):
            return sm100.allocator_lines(s, window_view(s.args[0], env), self.tmem_columns,
                                         self.cta_group)
        row = TMA_ROWS.get(name)
        if row is None:
            return lower_device_call(s, env)
        host = self.plan.tma_maps[id(s)]
        tm = env.tmaps.get(host.sym)
        if tm is None:
            raise InternalError(f"tensor map {host.sym.name} is not captured", s.loc)
        smem_arg = next(a for p, a in zip(s.callee.params, s.args)  # type: ignore[union-attr]
                        if p.name == row.smem_param)
        assert isinstance(smem_arg, ir.Window)
        smem = window_view(smem_arg, env)
        slot = None
        if row.is_load and s.trailing[0].buf in self.plan.indexed:  # TMA-CG-2
            indexed = self.plan.indexed[s.trailing[0].buf]
            idx, y = self.indexed_index(indexed, s.trailing[:1], env)
            slot = indexed_ring.trailing_slot(indexed, idx, y)
        elif row.is_load:
            ref = s.trailing[0]
            ring = self.plan.rings[ref.buf]
            slot = mbarrier.trailing_slot(ring, self.namer(ref.buf),
                                          self.ring_index(ring, (ref,), env))
        return lower_tma(s, row, env, smem, tm, slot, self.plan.dev.clusterDim)

    def seq_loop(self, s: ir.For, env: Env, tiling: Tiling, depth: int) -> list[str]:
        """`seq` → `for`, with `#pragma unroll` when requested. Rules: LANG-8.5"""
        pad = "    " * depth
        assert isinstance(s.mode, ir.Seq)
        name = self.namer(s.iter)
        lo, hi = cexpr(s.lo, env), cexpr(s.hi, env)
        out = []
        if s.mode.pragma_unroll is not None:
            count = s.mode.pragma_unroll
            out.append(pad + ("#pragma unroll" if count == 0 else f"#pragma unroll {count}"))
        out.append(pad + f"for (int_fast32_t {name} = {lo}; {name} < {hi}; {name}++) {{")
        body_env = env.child()
        body_env.ctrl[s.iter] = name
        out += self.block(s.body, body_env, tiling, depth + 1)
        return out + [pad + "}"]

    def guards(self, parent: Tiling, inner: Tiling, env: Env, depth: int,
               it: ir.Sym | None) -> tuple[list[str], Env]:
        """One `if ([[maybe_unused]] int V = E; COND) {` per guard the construct added (the
        named-range specialisation is discarded, COLL-4.6); a cuda_threads iterator is read as
        its guard variable. Rules: COLL-4.3, COLL-4.6, LANG-8.5"""
        new = [g for g in inner.guards[len(parent.guards):] if not g.discarded]
        if it is not None and len(new) != 1:
            raise InternalError(f"cuda_threads loop {it.name} added {len(new)} guards")
        env = env.child()
        out: list[str] = []
        for k, guard in enumerate(new):
            pad = "    " * (depth + k)
            for sym, text in list(env.ctrl.items()):
                if text == guard.c_name:
                    self.aliases += 1
                    alias = f"exo_outer{self.aliases}_{guard.c_name}"
                    out.append(pad + f"[[maybe_unused]] const int {alias} = {guard.c_name};")
                    env.ctrl[sym] = alias
            out.append(pad + f"if ([[maybe_unused]] int {guard.c_name} = {guard.expr.to_c()}; "
                       f"{guard.cond_c()}) {{")
        if it is not None:
            env.ctrl[it] = new[0].c_name
        return out, env

    def warps(self, s: ir.Warps, env: Env, tiling: Tiling, depth: int) -> list[str]:
        """A `CudaWarps` block: skipped in the task copies of other warp names, else guarded.
        Rules: COLL-4.3, COLL-4.6, LANG-8.4"""
        pad = "    " * depth
        name = self.plan.warp_names[id(s)]
        if self.warp is not None and name != self.warp:
            return [pad + f"// {s.cfg}: runs in the task of warp name {name!r}"]
        inner = self.plan.tiling(s)
        new = [g for g in inner.guards[len(tiling.guards):] if not g.discarded]
        out, guard_env = self.guards(tiling, inner, env, depth, None)
        out += self.block(s.body, guard_env, inner, depth + len(new))
        for k in range(len(new) - 1, -1, -1):
            out.append("    " * (depth + k) + "}")
        return out
