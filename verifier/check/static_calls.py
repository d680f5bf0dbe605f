"""Static rules of Fences, instruction calls and window statements (stages A and L).

Reads one `ir.Fence` / `ir.Call` / `ir.WindowStmt` with the scope's `Context` through the
`Analyzer` that owns the walk; checks fence legality and scope (LANG-5.20, COLL-3.2), instr-tl
placement (LANG-4.1), the instruction's unit (COLL-3.1), its trailing barrier (LANG-3.7, 5.7),
formal memories (LANG-4.2), packed dimensions (LANG-6.4) and tensor-map windows (LANG-3.4); records
the fence and access sites. Constructs outside the verifiable fragment whose static rules all hold
(wgmma fences, TMA tensor maps, trailing barriers) are deferred as `Unsupported` so that a later
static error is still reported first.
Non-goals: barrier statements (static_barriers), hazards (proof obligations).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from verifier import collectives
from verifier.diagnostics import RejectedInput, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.instrs import Instr, InstrParam
from verifier.lang.stdlib.memories import CudaClusterSync, CudaMbarrier, Memory
from verifier.lang.ir.printer import expr_text
from verifier.lang.stdlib.timelines import CPU_INSTR_TLS, QualTL, SyncTL, implements
from verifier.lang.stdlib.units import cuda_warpgroup
from verifier.semantics import rules
from verifier.semantics.rules import AccessKind
from verifier.check import static_instr_args as args, static_sm100
from verifier.lang.stdlib.instrs import callee_distributed
from verifier.check.sites import Context, Element, FenceSite, Loop
from verifier.check.walk_view import AnalyzerView


_KIND = {"r": AccessKind.read, "w": AccessKind.write, "rw": AccessKind.read_write,
         "a": AccessKind.atomic}


def fence(an: AnalyzerView, s: ir.Fence, ctx: Context) -> None:
    """LANG-5.20: wgmma fence (ERR-L01) or garden-variety fence (ERR-L02); COLL-3.2 scope."""
    if not ctx.cuda:
        raise RejectedInput("Fence not allowed in a scope using cpu_basic_device", s.loc,
                            code="ERR-A11", rule="LANG-4.3")
    assert ctx.device is not None
    if s.first is SyncTL.wgmma_fence_1:
        if s.second is not SyncTL.wgmma_fence_2:
            raise RejectedInput(f"wgmma fence needs second sync-tl wgmma_fence_2, not "
                                f"{s.second}", s.loc, code="ERR-L01", rule="LANG-5.20")
        problem = collectives.matches_unit(ctx.tiling, cuda_warpgroup, ctx.device.cfg)
        if problem is not None:
            raise RejectedInput(f"wgmma fence must be executed by a warpgroup: {problem}",
                                s.loc, code="ERR-L01", rule="COLL-3.2")
        an.model.fences.append(FenceSite(an.fresh_id(), s.first, s.second, ctx, s.loc))
        return
    tcgen05 = static_sm100.fence(s.first, s.second, s.loc)
    if tcgen05 == "wait":  # tcgen05.wait::ld / ::st: per thread, no thread sync
        an.model.fences.append(FenceSite(an.fresh_id(), s.first, s.second, ctx, s.loc))
        return
    if tcgen05 is None and not implements(s.first, SyncTL.Sm80_generic):
        raise RejectedInput(f"Fence first sync-tl {s.first} not supported (we allow "
                            "Sm80_generic)", s.loc, code="ERR-L02", rule="LANG-5.20")
    # the collective unit before the second sync-tl, in the order upstream checks them
    scope = collectives.fence_scope(ctx.tiling, ctx.device.cfg)
    if tcgen05 is None and not implements(s.second, SyncTL.cuda_generic_and_async_proxy):
        if s.second is SyncTL.Sm80_cp_async or \
                QualTL.Sm80 in rules.SYNC_SETS[s.second].temporal:
            msg = "Sm80_cp_async not supported as second sync-tl; use cuda_in_order"
        else:
            msg = (f"Fence second sync-tl {s.second} not supported (at most "
                   "cuda_generic_and_async_proxy)")
        raise RejectedInput(msg, s.loc, code="ERR-L02", rule="LANG-5.20")
    live = [d for d in an.live_barriers if d.mech is CudaClusterSync]
    if scope == "cluster" and live:
        raise RejectedInput(f"Invalid \"Fence({s.first}, {s.second})\" of lowered barrier type "
                            f"cluster_sync due to another such live barrier \"{live[0].sym.name}\" "
                            "in scope", s.loc, code="ERR-A17", rule="LANG-5.21")
    an.model.fences.append(FenceSite(an.fresh_id(), s.first, s.second, ctx, s.loc))


def call(an: AnalyzerView, s: ir.Call, ctx: Context) -> None:
    """LANG-4.1 placement, COLL-3.1 unit, LANG-3.7 trailing barrier, LANG-4.2 formals, SEM-4.2
    access sites of an instruction call."""
    callee = s.callee
    if not isinstance(callee, Instr):
        if ctx.cuda:
            raise RejectedInput(f"{callee.name}() has instr-tl cpu_in_order_instr; not "
                                "allowed in scope using cuda_basic_device", s.loc,
                                code="ERR-A04", rule="LANG-4.1")
        if s.trailing:
            raise RejectedInput(f"{callee.name} does not take trailing barrier expression >> "
                                f"{_ref_text(s.trailing[0])}", s.loc, code="ERR-A09",
                                rule="LANG-3.7")
        raise Unsupported("not supported by spork-verify: call of a non-instr proc",
                          s.loc, code="ERR-V11", rule="LANG-3.10")
    no_aliased_arguments(s, callee)
    static_sm100.pair_launch(callee, ctx, s.loc)
    in_cpu_tls = callee.instr_tl in CPU_INSTR_TLS
    if in_cpu_tls == ctx.cuda:
        scope = "cuda_basic_device" if ctx.cuda else "cpu_basic_device"
        raise RejectedInput(f"{callee.name}() has instr-tl {callee.instr_tl}; not allowed in "
                            f"scope using {scope}", s.loc, code="ERR-A04", rule="LANG-4.1")
    if ctx.cuda:
        assert ctx.device is not None
        unit = callee.unit_at(dict(s.kwargs))
        problem = collectives.matches_unit(ctx.tiling, unit, ctx.device.cfg)
        if problem is not None:
            raise RejectedInput(f"wrong collective unit (need {unit}) for "
                                f"{callee.name}(): {problem}", s.loc, code="ERR-A19",
                                rule="COLL-3.1")
    trailing_barrier(an, s, callee)
    if callee.unmodelled:  # its static rules above hold; its accesses are not modelled
        for param, arg in zip(callee.params, s.args):
            if isinstance(arg, ir.Window) and param.formal_mem:
                check_formal(an, arg, param.formal_mem, callee.name, s.loc)
        an.defer(Unsupported(f"not supported by spork-verify yet: instruction "
                             f"{callee.unmodelled}", s.loc, code="ERR-V11", rule="LANG-3.11"))
        return
    kw = {**dict(callee.bound), **dict(s.kwargs)}
    slices: dict[int, tuple[Context, tuple[ir.Expr, ...]]] = {}
    issuer = None  # COLL-5.12: the callee-distributed unit's synthetic iterator and scope
    for k, (param, arg) in enumerate(zip(callee.params, s.args)):
        if param.distributed and isinstance(arg, ir.Window):
            slices[k] = callee_slices(an, s, param, arg, ctx, kw)
            if issuer is None and slices[k][0] is not ctx:
                issuer = (slices[k][0].thread_iters[-1], slices[k][0])
    tag = args.trailing(an, s, callee, ctx, issuer, kw) if s.trailing else None
    for k, (param, arg) in enumerate(zip(callee.params, s.args)):
        if param.kind not in ("tensor", "scalar"):
            an.check_control(arg)
            continue
        if param.kind == "scalar" and isinstance(arg, ir.Read):
            arg = ir.Window(arg.buf, tuple(ir.Point(i, i.loc) for i in arg.idx), arg.loc)
        if not isinstance(arg, ir.Window) or (param.kind == "scalar" and any(
                isinstance(a, ir.Interval) for a in arg.idx)):
            what = "a scalar element" if param.kind == "scalar" else "a tensor"
            raise RejectedInput(f"argument {param.name} of {callee.name} must be {what}",
                                s.loc, code="ERR-P21", rule="LANG-3.6")
        check_formal(an, arg, param.formal_mem, callee.name, s.loc)
        args.formal_params(an, s, callee, param, arg, kw)
        args.tensor_map(an, s, callee, param, arg, kw)
        packed_window(an, arg, s.loc)
        args.call_shape(an, s, callee, param, arg, kw)
        args.row_stride(an, s, callee, param, arg, kw)
        sliced_ctx, idx = slices.get(k, (ctx, arg.idx))
        if param.cta_pair:  # BW-5.2: the leader's thread reaches both CTAs' slices itself
            static_sm100.pair_window(s, param, arg, ctx)
        else:
            an.note_use(arg.buf, sliced_ctx, idx)
        if param.owner_only:
            points = tuple(a.pt if isinstance(a, ir.Point) else None for a in idx)
            intervals = tuple((a.lo, a.hi) if isinstance(a, ir.Interval) else None for a in idx)
            element = Element(points, intervals)
        else:
            sliced_ctx, element = ctx, args.element(s, callee, param, arg)
        an.record_access(arg.buf, element, _KIND[param.access], callee.instr_tl, sliced_ctx,
                         s.loc, k, True, param.atomic_quals, single_thread=False,
                         callee=callee.name, trailing=tag)
        mem = an.mems[arg.buf]
        q0 = rules.qual_entry(mem.family, callee.instr_tl, f"{arg.buf.name} @ {mem}").q0
        if param.out_of_order is not None and param.out_of_order != (q0 in rules.OUT_OF_ORDER):
            order = "out-of-order" if param.out_of_order else "in-order"
            an.defer(Unsupported(f"not supported by spork-verify: instruction {callee.name} "
                                 f"declares {param.name} {order}, which {callee.instr_tl} on "
                                 f"{mem} is not (SEM-3.3)", s.loc, code="ERR-V11",
                                 rule="LANG-3.11"))
    if tag is not None:
        # SEM-6.2: the TMA reads each element it names, with its own qual-tl (tmaS, OOO,
        # non-convergent); that record carries the tags too
        decl = an.barrier_decls[tag.barrier]
        element = Element(tag.points, tuple(None if p is not None else
                                            (ir.Const(0, s.loc), ir.Const(n, s.loc))
                                            for p, n in zip(tag.points, decl.shape)))
        an.record_access(tag.barrier, element, AccessKind.read, callee.instr_tl, ctx, s.loc,
                         len(callee.params), True, single_thread=False, trailing=tag)


def no_aliased_arguments(s: ir.Call, callee: Instr) -> None:
    """A buffer an instr call writes through one argument is not passed through another
    (ERR-P21): the order of the instr's own reads and writes is not part of the model; e.g.
    `cuda_tk_tile_exp(t, t)` must be written with an in-place form or a second tile. Upstream
    refuses two read-only arguments naming one buffer too; spork-verify accepts those, as no
    synchronization depends on it. Rules: LANG-3.6"""
    names: dict[ir.Sym, list[str]] = {}
    for param, arg in zip(callee.params, s.args):
        if param.kind in ("tensor", "scalar") and isinstance(arg, (ir.Window, ir.Read)):
            names.setdefault(arg.buf, []).append(param.access)
    for buf, accesses in names.items():
        if len(accesses) > 1 and any(a != "r" for a in accesses):
            raise RejectedInput(f"Cannot Pass the same buffer '{buf.name}' via multiple "
                                f"arguments in call to {callee.name}, since doing so would "
                                "introduce aliased arguments", s.loc, code="ERR-P21",
                                rule="LANG-3.6", variable=buf.name)


def callee_slices(an: AnalyzerView, s: ir.Call, param: InstrParam, arg: ir.Window,
                  ctx: Context, kw: dict[str, Any] | None = None
                  ) -> tuple[Context, tuple[ir.Expr, ...]]:
    """COLL-5.12: a window whose first intervals the callee distributes is used as if it sat
    in `for y in cuda_threads(0, c, unit=U)` loops, one per distributed interval, which must
    be exactly `0:c`; each interval becomes its synthetic iterator (ERR-A23)."""
    dims = callee_distributed(param, arg)
    if not dims or not ctx.cuda:
        return ctx, arg.idx
    assert ctx.device is not None
    idx = list(arg.idx)
    for j, d in enumerate(dims):
        lo, hi = _const(d.interval.lo), _const(d.interval.hi)
        shape = param.shape(kw or {}) if param.shape is not None else ()
        want = shape[j] if j < len(shape) and isinstance(shape[j], int) else hi
        if lo != 0 or hi is None or hi != want:
            raise RejectedInput(f"Distributed memory deduction for {arg.buf.name} failed: "
                                f"{s.callee.name} argument {param.name}: expected "
                                f"idx[{d.pos}]=0:{want}, not {expr_text(d.interval)}", s.loc,
                                code="ERR-A23", rule="COLL-5.12", variable=arg.buf.name)
        sym = ir.Sym.fresh(f"_{j}_CALLEE_DISTRIBUTED")
        tiling = collectives.tile_threads(ctx.tiling, sym, sym.name, 0, hi, d.unit,
                                          ctx.device.cfg)
        ctx = replace(ctx, tiling=tiling, thread_iters=ctx.thread_iters + (sym,),
                      loops=ctx.loops + (Loop(sym, ir.Const(0, s.loc), ir.Const(hi, s.loc),
                                              "threads", s.loc),))
        idx[d.pos] = ir.Point(ir.Var(sym, s.loc), s.loc)
    return ctx, tuple(idx)


def trailing_barrier(an: AnalyzerView, s: ir.Call, callee: Instr) -> None:
    """`instr(...) >> z[...]` only for an instr that declares a barrier mechanism (ERR-A09,
    LANG-3.7), with as many intervals as its barrier units (ERR-A25, LANG-5.7, COLL-5.12)."""
    if callee.trailing_mech is None:
        if s.trailing:
            raise RejectedInput(f"{callee.name} does not take trailing barrier expression >> "
                                f"{_ref_text(s.trailing[0])}", s.loc, code="ERR-A09",
                                rule="LANG-3.7")
        return
    if not s.trailing:
        raise RejectedInput(f"{callee.name} requires trailing barrier expression in "
                            f"{callee.trailing_mech} (>> z[...])", s.loc, code="ERR-A09",
                            rule="LANG-3.7")
    ref = s.trailing[0]
    mech = an.barrier_decls[ref.buf].mech
    if mech is not CudaMbarrier or callee.trailing_mech != CudaMbarrier.name:
        raise RejectedInput(f"{callee.name} requires trailing barrier expression in "
                            f"{callee.trailing_mech}, not {mech} ({_ref_text(ref)})", s.loc,
                            code="ERR-A09", rule="LANG-3.7")
    have = sum(isinstance(a, ir.Interval) for a in ref.idx)
    if have != callee.barrier_units:
        raise RejectedInput(f"{callee.name} #intervals in barrier {_ref_text(ref)} wrong; have "
                            f"{have}, need {callee.barrier_units}", s.loc, code="ERR-A25",
                            rule="LANG-5.7")
    if len(ref.idx) != len(an.barrier_decls[ref.buf].shape):
        raise RejectedInput(f"expected {len(an.barrier_decls[ref.buf].shape)} indices for "
                            f"BarrierExpr {_ref_text(ref)}", s.loc, code="ERR-P22",
                            rule="LANG-5.4")
    an.trailing_calls.append(s)


def check_formal(an: AnalyzerView, arg: ir.Window, formal: str, name: str, loc: SrcLoc) -> None:
    """The actual's memory is the formal or a subclass of it (ERR-A07). Rules: LANG-4.2"""
    mem = an.mems[arg.buf]
    if formal and mem.name != formal and formal not in mem.bases:
        raise RejectedInput(f"expected `{arg.buf.name}` argument of {name} in {formal} but "
                            f"got an argument in {mem}", loc, code="ERR-A07", rule="LANG-4.2")


def packed_window(an: AnalyzerView, w: ir.Window, loc: SrcLoc) -> None:
    """A window of a memory with n packed dimensions takes the full `:` on its last n indices
    (points only before them) (ERR-A10). Rules: LANG-6.4"""
    mem = an.mems.get(w.buf)
    n = mem.packed_dims if isinstance(mem, Memory) else 0
    if n == 0:
        return
    shape = an.model.shapes.get(w.buf, ())
    for a, extent in zip(w.idx[-n:], shape[-n:]):
        full = isinstance(a, ir.Interval) and _const(a.lo) == 0 and \
            _const(a.hi) is not None and _const(a.hi) == _const(extent)
        if not full:
            text = ", ".join(expr_text(i) for i in w.idx)
            raise RejectedInput(f"{w.buf.name} @ {mem}: expected last {n} idx to have points "
                                f"before intervals (the packed dimensions take `:`), not "
                                f"[{text}]: {w.buf.name} must not have point expressions for "
                                f"packed dimensions (last {n})", loc, code="ERR-A10",
                                rule="LANG-6.4")


def window_stmt(an: AnalyzerView, s: ir.WindowStmt, ctx: Context) -> None:
    """Packed windows (ERR-A10); a tensor map only at CPU scope (ERR-A03) from GMEM (ERR-A08),
    then deferred as unsupported. Rules: LANG-3.4, LANG-6.4, LANG-6.6"""
    packed_window(an, s.rhs, s.loc)
    special = s.special
    if special is None:
        return
    name = f"{s.name.name} @ {special}"
    if ctx.cuda:
        raise RejectedInput(f"a special window {name} cannot be constructed in a scope using "
                            "cuda_basic_device", s.loc, code="ERR-A03", rule="LANG-3.4")
    mem = an.mems[s.rhs.buf]
    if mem.name != special.source_memory:
        raise RejectedInput(f"{special.name} expects {expr_text(s.rhs)} to be in memory "
                            f"{special.source_memory} but it's actually in {mem}", s.loc,
                            code="ERR-A08", rule="LANG-3.4")


def _const(e: ir.Expr) -> int | None:
    if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


def _ref_text(ref: ir.BarrierRef) -> str:
    if not ref.idx:
        return ref.buf.name
    return f"{ref.buf.name}[{', '.join(expr_text(i) for i in ref.idx)}]"
