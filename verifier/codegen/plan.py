"""Pre-pass over one `CudaDeviceFunction`: everything its CUDA text needs to know in advance.

Reads the device-function statement; produces a `DevicePlan`: the cuboid task nest, the
collective tiling of every thread loop, `CudaWarps` block, fence and instruction call (from
`verifier.collectives`, keyed by statement identity), the warp name of each `CudaWarps` block,
the number of distributed leading dimensions of every CUDA allocation (COLL-5 deduction), the
fixed shared-memory offset of every SMEM allocation (stack discipline over nested blocks), and
the CPU-scope variables the kernel captures, in first-use order, and for every barrier its
mechanism and the first sync-tl of its Arrives, and for every `CudaMbarrier` its ring (depth,
slices and their arrival counts, SMEM offset after all other allocations, SEM-8.5, COLL-5.11).
Non-goals: emitting text; re-checking what the static stages and the proofs established.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from verifier import collectives
from verifier.codegen.barriers import SUPPORTED_MECHANISMS
from verifier.codegen.data_rings import reserve
from verifier.codegen.exprs import TensorMap
from verifier.codegen.mbarrier_indexed import IndexedRing, plan_indexed
from verifier.codegen.mbarrier import (
    MbarrierRing,
    RingFacts,
    new_facts,
    note_arrive,
    note_await,
    note_trailing,
    plan_rings,
)
from verifier.codegen.names import ctype_of, ctype_size
from verifier.codegen.sm100 import TMEM_SLOT_BYTES, is_tmem, relaid_operands
from verifier.codegen.tensormap import resolve
from verifier.codegen.tma import TMA_ROWS, map_swizzle, map_window
from verifier.collectives import NotAVariable, Tiling
from verifier.diagnostics import (InternalError, RejectedInput, SporkError, UnhandledNode,
                                  Unsupported)
from verifier.lang.ir import ir
from verifier.lang.ir.lifetimes import EarlyRelease
from verifier.lang.stdlib.config import MAX_BLOCK_DIM, MAX_CLUSTER_DIM, CudaDeviceFunction
from verifier.lang.stdlib.instrs import DistributedDim, callee_distributed
from verifier.lang.stdlib.memories import BarrierMechanism, CudaMbarrier, Memory
from verifier.lang.ir.printer import expr_text
from verifier.lang.stdlib.timelines import SyncTL
from verifier.results import RELEASE_PROVED

SMEM_ALIGN = 128
SMEM_LIMIT = 227 * 1024


@dataclass(slots=True)
class _AllocUse:
    alloc: ir.Alloc
    tiling: Tiling
    uses: list[tuple[Tiling, tuple[object, ...]]] = field(default_factory=list)

@dataclass(slots=True)
class DevicePlan:
    """What the lowering of one device function needs. Rules: LANG-8.2, LANG-8.3, COLL-5.8"""
    index: int
    stmt: ir.DeviceFunction
    dev: CudaDeviceFunction
    task_loops: tuple[ir.For, ...]
    tilings: dict[int, Tiling] = field(default_factory=dict)
    warp_names: dict[int, str] = field(default_factory=dict)
    drops: dict[ir.Sym, int] = field(default_factory=dict)
    shards: dict[ir.Sym, tuple[int, ...]] = field(default_factory=dict)
    smem_offsets: dict[ir.Sym, int] = field(default_factory=dict)
    smem_bytes: int = 0
    captured: list[ir.Sym] = field(default_factory=list)
    barriers: dict[ir.Sym, BarrierMechanism] = field(default_factory=dict)
    arrive_first: dict[ir.Sym, SyncTL] = field(default_factory=dict)
    rings: dict[ir.Sym, MbarrierRing] = field(default_factory=dict)
    indexed: dict[ir.Sym, IndexedRing] = field(default_factory=dict)  # endgame (DIAL-13)
    tma_maps: dict[int, TensorMap] = field(default_factory=dict)
    smem_align: int = SMEM_ALIGN
    relaid: dict[ir.Sym, int] = field(default_factory=dict)  # linear SMEM stored swizzled

    @property
    def body(self) -> tuple[ir.Stmt, ...]:
        """The device task: the body of the innermost `cuda_tasks` loop."""
        return self.task_loops[-1].body

    def tiling(self, s: ir.Stmt) -> Tiling:
        try:
            return self.tilings[id(s)]
        except KeyError:
            raise InternalError("statement has no recorded collective tiling", s.loc) from None

def _task_nest(s: ir.DeviceFunction) -> tuple[ir.For, ...]:
    loops: list[ir.For] = []
    body = s.body
    while len(body) == 1 and isinstance(body[0], ir.For) and \
            isinstance(body[0].mode, ir.CudaTasks):
        loops.append(body[0])
        body = body[0].body
    if not loops:
        raise InternalError("CudaDeviceFunction without a cuda_tasks nest", s.loc)
    return tuple(loops)

def _literal(e: ir.Expr) -> int:
    if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    raise InternalError(f"expected an integer literal, not {expr_text(e)}", e.loc)

def _entry(e: ir.Expr) -> object:
    return e.name if isinstance(e, ir.Var) else NotAVariable(expr_text(e))

class _Planner:
    """Phase 1: tilings, uses and captures, in one walk of the device task."""
    def __init__(self, plan: DevicePlan, maps: tuple[TensorMap, ...]) -> None:
        self.plan = plan
        self.maps = maps
        self.allocs: dict[ir.Sym, _AllocUse] = {}
        self.bound: set[ir.Sym] = set()
        self.seen: set[ir.Sym] = set()
        self.mbars: dict[ir.Sym, RingFacts] = {}
        self.indexed: dict[ir.Sym, RingFacts] = {}  # endgame ring mbarriers (DIAL-13)

    def capture(self, sym: ir.Sym) -> None:
        if sym not in self.bound and sym not in self.seen:
            self.seen.add(sym)
            self.plan.captured.append(sym)

    def use(self, buf: ir.Sym, tiling: Tiling, idx: tuple[object, ...]) -> None:
        if buf in self.allocs:
            self.allocs[buf].uses.append((tiling, idx))
        self.capture(buf)

    def expr(self, e: ir.Expr, tiling: Tiling) -> None:
        match e:
            case ir.Const():
                pass
            case ir.Var(name=sym):
                self.capture(sym)
            case ir.Read(buf=buf, idx=idx):
                self.use(buf, tiling, tuple(_entry(i) for i in idx))
                for i in idx:
                    self.expr(i, tiling)
            case ir.BinOp(lhs=lhs, rhs=rhs):
                self.expr(lhs, tiling)
                self.expr(rhs, tiling)
            case ir.USub(arg=arg):
                self.expr(arg, tiling)
            case ir.Stride(buf=buf):
                self.capture(buf)
            case ir.Window(buf=buf, idx=idx):
                entries: list[object] = []
                for acc in idx:
                    match acc:
                        case ir.Point(pt=pt):
                            entries.append(_entry(pt))
                            self.expr(pt, tiling)
                        case ir.Interval(lo=lo, hi=hi):
                            entries.append(NotAVariable(expr_text(acc)))
                            self.expr(lo, tiling)
                            self.expr(hi, tiling)
                        case _:
                            raise UnhandledNode(acc)
                self.use(buf, tiling, tuple(entries))
            case _:
                raise UnhandledNode(e)

    def callee_window(self, w: ir.Window, dims: tuple[DistributedDim, ...], tiling: Tiling,
                      loc: SrcLoc) -> None:
        """A window whose first intervals the callee distributes (a shuffle's pair of
        registers): used as if inside `cuda_threads(0, c, unit=U)` loops, one synthetic
        iterator per interval, as the static stage deduced it. Rules: COLL-5.12"""
        entries: list[object] = []
        for a in w.idx:
            for e in ((a.pt,) if isinstance(a, ir.Point) else (a.lo, a.hi)):
                self.expr(e, tiling)
            entries.append(_entry(a.pt) if isinstance(a, ir.Point) else
                           NotAVariable(expr_text(a)))
        for j, d in enumerate(dims):
            sym = ir.Sym.fresh(f"_{j}_CALLEE_DISTRIBUTED")
            tiling = collectives.tile_threads(tiling, sym, sym.name, 0, _literal(d.interval.hi),
                                              d.unit, self.plan.dev)
            entries[d.pos] = sym
        self.use(w.buf, tiling, tuple(entries))

    def index_exprs(self, w: ir.Window, tiling: Tiling) -> None:  # not a use of w.buf itself
        for acc in w.idx:
            for e in ((acc.pt,) if isinstance(acc, ir.Point) else (acc.lo, acc.hi)):
                self.expr(e, tiling)

    def barrier(self, refs: tuple[ir.BarrierRef, ...]) -> tuple[object, ...]:
        """Check the barrier is in scope; the index entries of the home element (per dimension
        the point some expression gives, LANG-5.6), for distribution deduction."""
        ref = refs[0]
        if ref.buf not in self.plan.barriers:
            raise InternalError(f"{ref.buf.name} is not a barrier of this device task", ref.loc)
        entries: list[object] = []
        for k in range(len(ref.idx)):
            points = [r.idx[k].pt for r in refs if isinstance(r.idx[k], ir.Point)]
            if not points:
                raise InternalError(f"{ref.buf.name}: dimension {k} has no point (ERR-A26)",
                                    ref.loc)
            entries.append(_entry(points[0]))
        return tuple(entries)

    def call(self, s: ir.Call, tiling: Tiling) -> None:
        """Arguments; a TMA's tensor map (resolved and captured) and trailing barrier.
        Rules: LANG-6.6, SEM-8.6, COLL-5.12"""
        self.plan.tilings[id(s)] = tiling
        row = TMA_ROWS.get(getattr(s.callee, "name", ""))
        if row is None:
            if s.trailing:
                raise Unsupported(f"codegen of a trailing barrier on {s.callee}", s.loc,
                                  code="ERR-V11", rule="LANG-8.7")
            params = getattr(s.callee, "params", ())
            for k, a in enumerate(s.args):
                dims = callee_distributed(params[k], a) if k < len(params) and \
                    isinstance(a, ir.Window) else ()
                if dims:
                    self.callee_window(a, dims, tiling, s.loc)
                elif k < len(params) and params[k].cta_pair and isinstance(a, ir.Window):
                    self.index_exprs(a, tiling)  # BW-CG-9: the leader's slice names the pair
                else:
                    self.expr(a, tiling)
            return
        kwargs = {k: v for k, v in s.kwargs if isinstance(v, int)}
        window = map_window(s, row)
        tm = resolve(window, self.maps, map_swizzle(row, kwargs), str(s.callee), s.loc)
        self.plan.tma_maps[id(s)] = tm
        self.capture(tm.sym)
        for _, host in tm.dims:
            self.expr(host, tiling)
        for a in s.args:
            if a is window:
                self.index_exprs(window, tiling)
            elif row.kind == "multicast" and isinstance(a, ir.Window):
                # COLL-5.12: the destination's leading interval is distributed over the CTAs
                # of the multicast; the other uses of the allocation decide its distribution.
                self.index_exprs(a, tiling)
            else:
                self.expr(a, tiling)
        if row.is_load:  # an endgame ring's element (TMA-CG-2) or a February ring
            rings = {**self.mbars, **self.indexed}
            if len(s.trailing) != 1 or s.trailing[0].buf not in rings:
                raise InternalError(f"{s.callee} needs one trailing CudaMbarrier expression",
                                    s.loc)
            ref = s.trailing[0]
            entries = tuple(_entry(a.pt) if isinstance(a, ir.Point) else None for a in ref.idx)
            note_trailing(rings[ref.buf], tiling, entries, s.loc)

    def block(self, stmts: tuple[ir.Stmt, ...], tiling: Tiling, warp: str | None) -> None:
        for s in stmts:
            try:
                self.stmt(s, tiling, warp)
            except SporkError as err:
                if err.loc.line == 0:
                    err.loc = s.loc
                raise

    def stmt(self, s: ir.Stmt, tiling: Tiling, warp: str | None) -> None:
        dev = self.plan.dev
        match s:
            case ir.Pass():
                pass
            case ir.Alloc(name=name, typ=ir.BarrierType(mech=mech)):
                if mech not in SUPPORTED_MECHANISMS:
                    raise Unsupported(f"codegen of {mech} barriers is not supported yet (only "
                                      "commit groups, cluster sync and mbarriers)", s.loc,
                                      code="ERR-V11", rule="SEM-8.5")
                if mech == CudaMbarrier and s.typ.ring is not None:
                    self.indexed[name] = new_facts(s, tiling)
                elif mech == CudaMbarrier:
                    self.mbars[name] = new_facts(s, tiling)
                self.bound.add(name)
                self.plan.barriers[name] = mech
            case ir.Alloc(name=name):
                self.bound.add(name)
                self.allocs[name] = _AllocUse(s, tiling)
            case ir.Assign(buf=buf, idx=idx, rhs=rhs) | ir.Reduce(buf=buf, idx=idx, rhs=rhs):
                self.use(buf, tiling, tuple(_entry(i) for i in idx))
                for i in idx:
                    self.expr(i, tiling)
                self.expr(rhs, tiling)
            case ir.WindowStmt(name=name, rhs=rhs, special=special):
                if special is not None:
                    raise Unsupported("codegen of tensor maps is not supported yet", s.loc,
                                      code="ERR-V11", rule="LANG-6.6")
                self.expr(rhs, tiling)
                self.bound.add(name)
            case ir.If(cond=cond, body=body, orelse=orelse):
                self.expr(cond, tiling)
                self.block(body, tiling, warp)
                self.block(orelse, tiling, warp)
            case ir.For(iter=it, lo=lo, hi=hi, mode=ir.Seq(), body=body):
                self.expr(lo, tiling)
                self.expr(hi, tiling)
                self.bound.add(it)
                self.block(body, tiling, warp)
            case ir.For(iter=it, lo=lo, hi=hi, mode=ir.CudaThreads(unit=unit), body=body):
                inner = collectives.tile_threads(tiling, it, it.name, _literal(lo),
                                                 _literal(hi), unit, dev)
                self.plan.tilings[id(s)] = inner
                self.bound.add(it)
                self.block(body, inner, warp)
            case ir.For(mode=ir.CudaTasks() | ir.Par()):
                raise InternalError("cuda_tasks/par loop inside a device task", s.loc)
            case ir.Warps(cfg=cfg, body=body):
                inner, warp_name = collectives.tile_warps(tiling, cfg, dev, warp)
                self.plan.tilings[id(s)] = inner
                self.plan.warp_names[id(s)] = warp_name
                self.block(body, inner, warp_name)
            case ir.Call():
                self.call(s, tiling)
            case ir.Fence():
                self.plan.tilings[id(s)] = tiling
            case ir.Arrive(first=first, targets=targets):
                multicast = len(targets) != 1 or any(isinstance(a, ir.Interval)
                                                     for a in targets[0].idx)
                if multicast and targets[0].buf not in self.mbars and \
                        targets[0].buf not in self.indexed:
                    raise InternalError("multicast Arrive on a barrier that is not a "
                                        "CudaMbarrier (ERR-A30)", s.loc)
                entries = self.barrier(targets)
                self.plan.tilings[id(s)] = tiling
                self.plan.arrive_first.setdefault(targets[0].buf, first)
                if targets[0].buf in self.mbars:
                    note_arrive(self.mbars[targets[0].buf], s, tiling, entries)
                elif targets[0].buf in self.indexed:
                    note_arrive(self.indexed[targets[0].buf], s, tiling, entries)
            case ir.Await(target=target):
                entries = self.barrier((target,))
                self.plan.tilings[id(s)] = tiling
                if target.buf in self.mbars:
                    note_await(self.mbars[target.buf], s, tiling, entries)
                elif target.buf in self.indexed:
                    self.indexed[target.buf].roles["Await"].append((tiling, entries, s.loc))
            case ir.DeviceFunction():
                raise InternalError("nested CudaDeviceFunction", s.loc)
            case ir.For():
                raise UnhandledNode(s.mode)
            case _:
                raise UnhandledNode(s)

def _shape_entries(typ: ir.Type) -> list[object]:
    shape = typ.shape if isinstance(typ, ir.Tensor) else ()
    return [d.value if isinstance(d, ir.Const) and isinstance(d.value, int) else expr_text(d)
            for d in shape]

def _distribute(plan: DevicePlan, allocs: dict[ir.Sym, _AllocUse]) -> None:
    """R and shard shape of every CUDA allocation. Rules: COLL-5.6, COLL-5.8"""
    for sym, info in allocs.items():
        mem = info.alloc.mem
        if not isinstance(mem, Memory) or mem.native_unit is None:
            raise InternalError(f"{sym.name} @ {mem} allocated in CUDA scope", info.alloc.loc)
        shape = _shape_entries(info.alloc.typ)
        try:
            dist = collectives.deduce_distribution(info.tiling, mem.native_unit, info.uses,
                                                   shape, plan.dev, name=sym.name)
        except SporkError as err:
            if err.loc.line == 0:
                err.loc = info.alloc.loc
            raise
        shard = [d for d in shape[dist.R:] if isinstance(d, int)]
        if len(shard) != len(shape) - dist.R:
            raise InternalError(f"{sym.name}: non-constant shard shape {shape[dist.R:]}",
                                info.alloc.loc)
        plan.drops[sym] = dist.R
        plan.shards[sym] = tuple(shard)

def smem_swizzle(mem: Memory) -> int:
    """s for `Sm90_SmemSwizzled(s)`, 0 for linear memories. Rules: LANG-6.3"""
    if mem.name == "Sm90_SmemSwizzled":
        if len(mem.params) != 1 or mem.params[0] not in (32, 64, 128):
            raise InternalError(f"{mem}: swizzle must be 32, 64 or 128")
        return mem.params[0]
    return 0


def _first_fit(live: list[tuple[int, int]], size: int, align: int) -> int:
    """The lowest `align`-aligned offset where [offset, offset + size) meets no live range."""
    offset = 0
    for start, end in sorted(live):
        if offset + size <= start:
            break
        offset = max(offset, -(-end // align) * align)
    return offset


@dataclass(frozen=True)
class _Releases:
    """The early releases (CG-R1) of one proc: candidates by allocation, and the ids the
    certificate says are proved."""
    by_alloc: dict[int, EarlyRelease]
    proved: frozenset[str]


def _smem_extent(plan: DevicePlan, name: ir.Sym, typ: ir.Type, mem: Memory) -> tuple[int, int]:
    """Bytes and alignment of one SMEM allocation (of a TMEM variable: its address slot,
    BW-CG-2). Rules: LANG-6.3"""
    if is_tmem(mem):
        return TMEM_SLOT_BYTES, SMEM_ALIGN
    base = ir.element_type(typ)
    assert base is not None  # an SMEM allocation holds data
    size = prod(plan.shards[name]) * ctype_size(ctype_of(base))
    align = SMEM_ALIGN
    swizzle = plan.relaid.get(name, 0) or smem_swizzle(mem)  # BW-CG-11
    if swizzle:  # Sm90_SmemSwizzled(s): whole s-byte rows, 8-row-aligned base
        size = -(-size // swizzle) * swizzle
        align = max(align, 8 * swizzle)
        plan.smem_align = max(plan.smem_align, align)
    return size, align


def _layout(plan: DevicePlan, stmts: tuple[ir.Stmt, ...], live: list[tuple[int, int]],
            releases: _Releases) -> None:
    """Fixed SMEM offsets, first fit over the byte ranges live at each allocation: a block's
    allocations are released at its end (SEM-4.7), or before the statement of a proved early
    release (CG-R1), whose range a later allocation may then take. Rules: LANG-8.3, CG-R1"""
    live = list(live)
    ranges: dict[ir.Sym, tuple[int, int]] = {}
    release_before: dict[int, list[ir.Sym]] = {}
    for k, s in enumerate(stmts):
        for sym in release_before.pop(k, ()):
            live.remove(ranges[sym])
        match s:
            case ir.Alloc(name=name, typ=typ, mem=mem) if isinstance(mem, Memory) and \
                    (mem.is_smem or is_tmem(mem)):
                size, align = _smem_extent(plan, name, typ, mem)
                offset = plan.smem_offsets.get(name, -1)  # a data ring's, reserved (DIAL-20)
                offset = offset if offset >= 0 else _first_fit(live, size, align)
                plan.smem_offsets[name] = offset
                ranges[name] = (offset, offset + size)
                live.append(ranges[name])
                plan.smem_bytes = max(plan.smem_bytes, offset + size)
                early = releases.by_alloc.get(id(s))
                if early is not None and early.block is stmts and early.id in releases.proved:
                    release_before.setdefault(early.index, []).append(name)
            case ir.For(body=body) | ir.Warps(body=body):
                _layout(plan, body, live, releases)
            case ir.If(body=body, orelse=orelse):
                _layout(plan, body, live, releases)
                _layout(plan, orelse, live, releases)
            case ir.Alloc() | ir.Assign() | ir.Reduce() | ir.WindowStmt() | ir.Pass() \
                    | ir.Call() | ir.Fence() | ir.Arrive() | ir.Await() | ir.DeviceFunction():
                pass
            case _:
                raise UnhandledNode(s)


def _too_large(plan: DevicePlan, releases: dict[str, str], by_alloc: dict[int, EarlyRelease]
               ) -> Unsupported:
    """ERR-L06 naming each early release of this kernel that was not proved, and why."""
    inside = {id(t) for t in ir.statements(plan.body)}
    mine = [r for r in by_alloc.values() if id(r.alloc) in inside]
    failed = [f"the early release of {r.alloc.name.name} before {r.before.loc} (CG-R1) is "
              f"{releases.get(r.id, 'not in the certificate')}"
              for r in mine if releases.get(r.id) != RELEASE_PROVED]
    why = "; ".join(failed) if failed else "every early release of this kernel (CG-R1) is " \
        "already used" if mine else "no allocation has an early release point (CG-R1)"
    return Unsupported(f"{plan.smem_bytes} bytes of shared memory exceed the {SMEM_LIMIT}-byte "
                       "limit (an allocation lives to the end of its scope, where its free is "
                       f"verified, SEM-4.7, unless an early release is proved: {why}; allocate "
                       "later buffers in a scope of their own to reuse the space)",
                       plan.stmt.loc, code="ERR-L06", rule="LANG-8.3")


def plan_device_function(s: ir.DeviceFunction, index: int,
                         maps: tuple[TensorMap, ...] = (),
                         releases: dict[str, str] | None = None,
                         candidates: tuple[EarlyRelease, ...] = ()) -> DevicePlan:
    """Run both phases for one device function; `maps` are the tensor maps in scope,
    `releases` the certificate's early releases (id -> outcome) and `candidates` the proc's
    early-release points (`lang.ir.lifetimes.early_releases`). Rules: LANG-8.2, LANG-8.3,
    COLL-5.8, LANG-6.6, CG-R1"""
    if s.cfg.blockDim > MAX_BLOCK_DIM or s.cfg.clusterDim > MAX_CLUSTER_DIM:
        raise RejectedInput(f"cannot launch blockDim={s.cfg.blockDim}, clusterDim="
                            f"{s.cfg.clusterDim} (CUDA allows at most {MAX_BLOCK_DIM} threads "
                            f"per CTA and {MAX_CLUSTER_DIM} CTAs per cluster)", s.loc,
                            code="ERR-L06", rule="LANG-8.2")
    plan = DevicePlan(index, s, s.cfg, _task_nest(s), relaid=relaid_operands(s))
    planner = _Planner(plan, maps)
    top = collectives.top_tiling(plan.dev)
    for loop in plan.task_loops:
        planner.expr(loop.lo, top)
        planner.expr(loop.hi, top)
    planner.bound.update(loop.iter for loop in plan.task_loops)
    planner.block(plan.body, top, top.warp_name)
    _distribute(plan, planner.allocs)
    releases = releases or {}
    by_alloc = {id(r.alloc): r for r in candidates}
    proved = frozenset(rid for rid, outcome in releases.items() if outcome == RELEASE_PROVED)
    live = reserve(plan.body, lambda a: _smem_extent(plan, a.name, a.typ, a.mem), plan.smem_offsets)
    _layout(plan, plan.body, live, _Releases(by_alloc, proved))
    plan.rings, plan.smem_bytes = plan_rings(planner.mbars, plan.dev, plan.smem_bytes)
    plan.indexed, plan.smem_bytes = plan_indexed(planner.indexed, plan.dev, top,
                                                 plan.smem_bytes)
    if plan.smem_align > SMEM_ALIGN:  # room to align the dynamic SMEM base at run time
        plan.smem_bytes += plan.smem_align
    if plan.smem_bytes > SMEM_LIMIT:
        raise _too_large(plan, releases, by_alloc)
    return plan
