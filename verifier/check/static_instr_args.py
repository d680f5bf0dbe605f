"""Static rules of instruction arguments beyond their memories (language.md §6-7, SEM-4.3,
COLL-5.12): window shapes, tensor-map windows, swizzle parameters, wgmma operand strides,
callee-distributed dimensions, and the trailing barrier of a TMA load.

Reads one `ir.Call` of an `Instr` with its scope; produces errors, the per-parameter
`Element` (with clipping) and the use entries for distributed-memory deduction, and the
`TmaSite` of a TMA load. Non-goals: the instruction's unit and formal memory class
(static_calls), alternation of the trailing barrier (static_barriers).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from verifier import collectives
from verifier.diagnostics import RejectedInput, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.ir.affine import constant_difference
from verifier.lang.stdlib.instrs import Instr, InstrParam
from verifier.lang.stdlib.memories import Memory
from verifier.lang.ir.printer import expr_text
from verifier.lang.stdlib.units import cuda_cta_in_cluster
from verifier.check.sites import Context, Element, Loop, TmaSite, Trailing
from verifier.semantics.access import limit_args
from verifier.semantics.transactions import ELEMENT_BYTES, tma_bytes
from verifier.check.static_rings import without_ring
from verifier.check.walk_view import AnalyzerView

if TYPE_CHECKING:
    import sympy


def _sym(e: ir.Expr, names: dict[ir.Sym, sympy.Symbol]) -> sympy.Expr:
    import sympy

    match e:
        case ir.Const(value=v):
            return sympy.Integer(int(v))
        case ir.Var(name=n):
            return names.setdefault(n, sympy.Symbol(f"{n.name}_{n.id}", integer=True))
        case ir.USub(arg=a):
            return -_sym(a, names)
        case ir.BinOp(op=op, lhs=lhs, rhs=rhs) if op in ("+", "-", "*", "/", "%"):
            a, b = _sym(lhs, names), _sym(rhs, names)
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                return sympy.floor(a / b)
            return sympy.Mod(a, b)
        case _:
            raise ValueError(expr_text(e))


def extent_value(lo: ir.Expr, hi: ir.Expr) -> int | None:
    """hi - lo as an int when it simplifies to a constant for every value of its variables.
    Linear combinations are subtracted directly (the common case: `4 * (t % 8) : 4 * (t % 8)
    + 4`); what that leaves non-constant goes to sympy, which also sees through floor division
    and modulo (imported only then: loading it is a third of the command line's start-up)."""
    linear = constant_difference(lo, hi)
    if linear is not None:
        return linear
    import sympy

    names: dict[ir.Sym, sympy.Symbol] = {}
    try:
        diff_expr = sympy.simplify(sympy.expand(_sym(hi, names) - _sym(lo, names)))
    except (ValueError, TypeError):
        return None
    return int(diff_expr) if diff_expr.is_Integer else None


def call_shape(an: AnalyzerView, s: ir.Call, callee: Instr, param: InstrParam,
               arg: ir.Window, kw: dict[str, Any]) -> None:
    """The window's interval extents equal the parameter's shape (upstream's type-shape rule,
    ERR-P21): a smaller window would hide writes the hardware performs (SEM-4.3)."""
    if param.shape is None:
        return
    want: list[int | str] = []
    values: dict[str, Any] = dict(kw)
    exprs: dict[str, ir.Expr] = {}
    for p, a in zip(callee.params, s.args):
        if p.kind in ("size", "index"):
            if isinstance(a, ir.Const):
                values[p.name] = a.value
            else:
                exprs[p.name] = a
    for d in param.shape(kw):
        want.append(values.get(d, d) if isinstance(d, str) else d)
    have: list[int | None] = []
    intervals = [a for a in arg.idx if isinstance(a, ir.Interval)]
    for k, a in enumerate(intervals):
        w = want[k] if k < len(want) else None
        if isinstance(w, str) and w in exprs:  # a size argument: compare symbolically
            rest = extent_value(ir.BinOp("+", a.lo, exprs[w], a.loc), a.hi)
            if rest is not None and rest != 0:
                raise RejectedInput(f"type-shape of calling argument may not equal the required "
                                    f"type-shape: {param.name} of {callee.name} has extent "
                                    f"{expr_text(exprs[w])} {rest:+d} on its window dimension "
                                    f"{k}, the parameter needs {expr_text(exprs[w])}", s.loc,
                                    code="ERR-P21", rule="LANG-3.6")
            if rest == 0:
                want[k] = 0
                have.append(0)
                continue
        have.append(extent_value(a.lo, a.hi))
    text = ", ".join(expr_text(a) for a in arg.idx)
    if len(have) != len(want):
        raise RejectedInput(f"type-shape of calling argument may not equal the required "
                            f"type-shape: {param.name} of {callee.name} is a {len(have)}-d "
                            f"window [{text}], the parameter is {len(want)}-d", s.loc,
                            code="ERR-P21", rule="LANG-3.6")
    for k, (h, w) in enumerate(zip(have, want)):
        if not isinstance(w, int):
            raise Unsupported(f"not supported by spork-verify: the shape of {param.name} of "
                              f"{callee.name} depends on the size argument {w} in a way not "
                              "shown equal to the window's extent", s.loc,
                              code="ERR-V11", rule="LANG-3.6")
        if h is None:
            raise Unsupported(f"not supported by spork-verify: the extent of dimension {k} of "
                              f"{param.name} of {callee.name} ([{text}]) is not a constant; "
                              f"it must be {w}", s.loc, code="ERR-V11", rule="LANG-3.6")
        if h != w:
            raise RejectedInput(f"type-shape of calling argument may not equal the required "
                                f"type-shape: {param.name} of {callee.name} [{text}] has extent "
                                f"{h} on its window dimension {k}, the parameter needs {w}",
                                s.loc, code="ERR-P21", rule="LANG-3.6")


def formal_params(an: AnalyzerView, s: ir.Call, callee: Instr, param: InstrParam,
                  arg: ir.Window, kw: dict[str, Any]) -> None:
    """A parameterised formal memory (Sm90_SmemSwizzled(128), Sm90_RmemMatrixD(M, N)) needs
    the actual's parameters too (ERR-A07). Rules: LANG-4.2"""
    if param.formal_params is None:
        return
    mem = an.mems[arg.buf]
    want = param.formal_params(kw)
    if isinstance(mem, Memory) and mem.name == param.formal_mem and mem.params != want:
        formal = f"{param.formal_mem}({', '.join(map(str, want))})"
        raise RejectedInput(f"expected `{arg.buf.name}` argument of {callee.name} in {formal} "
                            f"but got an argument in {mem}", s.loc, code="ERR-A07",
                            rule="LANG-4.2")


def tensor_map(an: AnalyzerView, s: ir.Call, callee: Instr, param: InstrParam,
               arg: ir.Window, kw: dict[str, Any]) -> None:
    """A TMA's GMEM side is a window taken through a tensor map with the instr's swizzle and
    box (ERR-A07), of the box's rank, with points only where the box extent is 1 (ERR-L06).
    Rules: LANG-3.4, LANG-6.6"""
    if param.tensor_map is None:
        return
    swizzle, box = param.tensor_map(kw)
    want = f"Sm90_tensorMap({', '.join(map(str, (swizzle,) + tuple(box)))})"
    if arg.tensor_map is None:
        raise RejectedInput(f"expected `{arg.buf.name}` argument of {callee.name} in {want} but "
                            f"got an argument in {an.mems[arg.buf]}", s.loc, code="ERR-A07",
                            rule="LANG-3.4")
    special = arg.tensor_map[1]
    if special.swizzle != swizzle or tuple(special.box) != tuple(box):
        raise RejectedInput(f"expected `{arg.tensor_map[0].name}` argument of {callee.name} in "
                            f"{want} but got an argument in {special}", s.loc, code="ERR-A07",
                            rule="LANG-3.4")
    if len(arg.idx) != len(box):
        raise RejectedInput(f"taking window of {len(arg.idx)}d tensor not supported given SMEM "
                            f"box {tuple(box)}", s.loc, code="ERR-L06", rule="LANG-6.6")
    for k, (a, extent) in enumerate(zip(arg.idx, box)):
        if isinstance(a, ir.Point) and extent != 1:
            raise RejectedInput(f"Unexpected point expression {expr_text(a.pt)}; not allowed for "
                                f"non-1 box size {extent} on dimension {k} (0-indexed)", s.loc,
                                code="ERR-L06", rule="LANG-6.6")


def row_stride(an: AnalyzerView, s: ir.Call, callee: Instr, param: InstrParam,
               arg: ir.Window, kw: dict[str, Any]) -> None:
    """wgmma reads a K = 8 slice of rows `row_stride` elements apart (stride(a, 0) == 32), a
    ThunderKittens SMEM tile is dense: the window's last dimension lies in the allocation's
    last dimension, of that extent (a constant, or the template keyword it names)."""
    if not param.row_stride:
        return
    want = kw[param.row_stride] if isinstance(param.row_stride, str) else param.row_stride
    shape = an.model.shapes.get(arg.buf, ())
    last = shape[-1] if shape else None
    ok = isinstance(last, ir.Const) and last.value == want and \
        isinstance(arg.idx[-1], ir.Interval)
    if not ok:
        raise RejectedInput(f"{param.name} of {callee.name} needs the stride of its rows == "
                            f"{want}: its rows must be the last dimension of an "
                            f"allocation of extent {want}, not {arg.buf.name}"
                            f"{[expr_text(d) for d in shape]}", s.loc, code="ERR-L06",
                            rule="LANG-6.4")


def element(s: ir.Call, callee: Instr, param: InstrParam, arg: ir.Window) -> Element:
    """The touched set of one window argument, with its clipping (SEM-4.3)."""
    points = tuple(a.pt if isinstance(a, ir.Point) else None for a in arg.idx)
    intervals = tuple((a.lo, a.hi) if isinstance(a, ir.Interval) else None for a in arg.idx)
    if param.clip == "tensor_map":
        return Element(points, intervals, clip_to_shape=True)
    return Element(points, intervals, limits=limit_args(s, param, arg))


def synthetic(an: AnalyzerView, s: ir.Call, ctx: Context, ncta: int
              ) -> tuple[ir.Sym, Context]:
    """COLL-5.12: the callee's distributed unit as a loop `for y in cuda_threads(0, ncta,
    unit=cuda_cta_in_cluster)` around the access; its iterator replaces the leading `0:ncta`
    interval of the window and the interval of the trailing barrier."""
    assert ctx.device is not None
    sym = ir.Sym(f"cta@{s.loc.line}", -s.loc.line * 1000 - s.loc.col)
    tiling = collectives.tile_threads(ctx.tiling, sym, sym.name, 0, ncta, cuda_cta_in_cluster,
                                      ctx.device.cfg)
    loop = Loop(sym, ir.Const(0, s.loc), ir.Const(ncta, s.loc), "threads", s.loc)
    return sym, replace(ctx, loops=ctx.loops + (loop,), tiling=tiling,
                        thread_iters=ctx.thread_iters + (sym,))


def distributed_entries(s: ir.Call, callee: Instr, param: InstrParam, arg: ir.Window,
                        sym: ir.Sym | None, kw: dict[str, Any]) -> tuple[Any, ...]:
    """The index list of a callee-distributed window for deduction: its first `distributed`
    intervals must be exactly `0:ncta` (COLL-5.12) and become the synthetic iterator."""
    idx: list[Any] = list(arg.idx)
    if not param.distributed:
        return tuple(idx)
    assert sym is not None
    ncta = kw.get("ncta", 1)
    first = next((k for k, a in enumerate(idx) if isinstance(a, ir.Interval)), None)
    a = idx[first] if first is not None else None
    if not isinstance(a, ir.Interval) or not (_const(a.lo) == 0 and _const(a.hi) == ncta):
        got = expr_text(a) if a is not None else "no interval"
        raise RejectedInput(f"{callee.name}: expected idx[{first or 0}]=0:{ncta}, not {got} "
                            f"for the distributed dimension of {param.name}", s.loc,
                            code="ERR-A23", rule="COLL-5.12")
    idx[first] = ir.Point(ir.Var(sym, s.loc), s.loc)
    return tuple(idx)


def trailing(an: AnalyzerView, s: ir.Call, callee: Instr, ctx: Context,
             issuer: tuple[ir.Sym, Context] | None, kw: dict[str, Any]) -> Trailing:
    """The trailing barrier of a TMA load: its uses for deduction (the interval becomes the
    synthetic iterator, COLL-5.12), its tags (SEM-6.5) and its transaction site (TX-1)."""
    ref = s.trailing[0]
    points = tuple(a.pt if isinstance(a, ir.Point) else None for a in ref.idx)
    tag = Trailing(ref.buf, points, s.loc)
    decl = an.barrier_decls[ref.buf]
    if issuer is not None:
        sym, issuer_ctx = issuer
        ncta = kw["ncta"]
        for k, (a, extent) in enumerate(zip(ref.idx, decl.shape)):
            if isinstance(a, ir.Interval) and (_const(a.lo) != 0 or _const(a.hi) != extent
                                               or extent != ncta):
                raise RejectedInput(f"{callee.name}: expected idx[{k}]=0:{ncta} in the trailing "
                                    f"barrier {ref.buf.name} (extent {extent}), not "
                                    f"{expr_text(a)}", s.loc, code="ERR-A24", rule="COLL-5.12")
        own = tuple(ir.Var(sym, s.loc) if p is None else p for p in points)
        an.note_use(ref.buf, issuer_ctx, without_ring(decl, tuple(ir.Point(e, s.loc)
                                                                  for e in own)))
    else:
        sym, issuer_ctx = None, ctx  # type: ignore[assignment]
        own = tuple(p for p in points if p is not None)
        an.note_use(ref.buf, ctx, without_ring(decl, ref.idx))
    info = callee.tma
    if info is None:
        raise Unsupported(f"not supported by spork-verify: {callee.name} completes on an "
                          "mbarrier but declares no transaction byte count (TX-1)", s.loc,
                          code="ERR-V11", rule="SEM-8.6")
    src = next(a for p, a in zip(callee.params, s.args) if p.name == info.source)
    assert isinstance(src, ir.Window)
    base = an.elem_types.get(src.buf, "f32")
    if base not in ELEMENT_BYTES:
        raise Unsupported(f"not supported by spork-verify: TMA of {base} elements", s.loc,
                          code="ERR-V11", rule="SEM-8.6")
    expected, delivered = tma_bytes(info, kw, base)
    an.model.tmas.append(TmaSite(an.fresh_id(), s, ctx, issuer_ctx, tag, own, sym,
                                 info.ncta(kw), expected, delivered, s.loc))
    return tag


def _const(e: ir.Expr) -> int | None:
    if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


__all__ = ["call_shape", "distributed_entries", "element", "formal_params", "row_stride",
           "synthetic", "tensor_map", "trailing", "SrcLoc"]
