"""`replace(p, p.find_loop(name), instr)` for copy instructions (API-1).

Upstream's `replace` unifies a loop nest with an instruction's behaviour and puts a call in
its place. The scripts run before verification (upstream's tests/cuda, sporkbench) use it for
one shape only: a perfect nest of `seq(0, n)` loops around a single copy `dst[...] = src[...]`,
replaced by a host copy (`cudaMemcpyAsync_*`) or a packed register load/store, whose behaviour
is that same element-wise copy. That unification is reproduced exactly: each buffer index is
either loop-invariant (a point of the window) or `iter + offset` for the loops in nest order
(an interval of the window, innermost last, so the unit-stride asserts of those behaviours
hold). The call accesses exactly the elements the nest did. Anything else is `Unsupported`
naming `replace` (API-2), never a silently unreplaced loop.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from verifier.diagnostics import Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.instrs import Instr
from verifier.lang.ir.ir import EXO_GPU_HINT
from verifier.lang.rewrite.scheduling import _replace_nodes


def _unsupported(why: str) -> Unsupported:
    return Unsupported(f"not supported by spork-verify: replace({why}); only a nest of "
                       "seq(0, n) loops around one copy `dst[...] = src[...]`, replaced by a "
                       f"copy instr, is reproduced; {EXO_GPU_HINT}", rule="API-2",
                       code="ERR-V11")


class _Probe:
    """Stands for a template keyword while reading an instr's window shape."""

    def __init__(self, name: str) -> None:
        self.name = name


def _iters_in(e: Any, iters: tuple[ir.Sym, ...]) -> set[ir.Sym]:
    match e:
        case ir.Var(name=name):
            return {name} & set(iters)
        case ir.BinOp(lhs=a, rhs=b):
            return _iters_in(a, iters) | _iters_in(b, iters)
        case ir.USub(arg=a):
            return _iters_in(a, iters)
        case ir.Read(idx=idx):
            return set().union(*(_iters_in(i, iters) for i in idx)) if idx else set()
    return set()


def _offset(e: ir.Expr, it: ir.Sym, iters: tuple[ir.Sym, ...]) -> ir.Expr | None:
    """`e - it` when `e` is `it` plus loop-invariant terms (coefficient 1), else None."""
    if isinstance(e, ir.Var) and e.name == it:
        return ir.Const(0, e.loc)
    if isinstance(e, ir.BinOp) and e.op in ("+", "-"):
        left, right = _iters_in(e.lhs, iters), _iters_in(e.rhs, iters)
        if left == {it} and not right:
            inner = _offset(e.lhs, it, iters)
            return None if inner is None else ir.BinOp(e.op, inner, e.rhs, e.loc)
        if e.op == "+" and right == {it} and not left:
            inner = _offset(e.rhs, it, iters)
            return None if inner is None else ir.BinOp("+", e.lhs, inner, e.loc)
    return None


def _window(buf: ir.Sym, idx: tuple[ir.Expr, ...], nest: list[ir.For], loc: Any) -> ir.Window:
    iters = tuple(lp.iter for lp in nest)
    out: list[ir.Access] = []
    used: list[ir.Sym] = []
    for e in idx:
        found = _iters_in(e, iters)
        if not found:
            out.append(ir.Point(e, loc))
            continue
        it = next(iter(found))
        off = _offset(e, it, iters) if len(found) == 1 else None
        if off is None:
            raise _unsupported(f"index {buf.name}[...] is not `iter + offset`")
        used.append(it)
        hi = nest[iters.index(it)].hi
        out.append(ir.Interval(off, ir.BinOp("+", off, hi, loc), loc))
    if used != list(iters):
        raise _unsupported(f"{buf.name} is not indexed by the loops in nest order, once each")
    if not isinstance(out[-1], ir.Interval):
        raise _unsupported(f"the window of {buf.name} would not have unit stride")
    return ir.Window(buf, tuple(out), loc)


def _element_types(p: ir.Proc) -> dict[ir.Sym, ir.Type]:
    types: dict[ir.Sym, ir.Type] = {a.name: a.typ for a in p.args}

    def visit(node: Any) -> Any:
        if isinstance(node, ir.Alloc):
            types[node.name] = node.typ
        return node
    _replace_nodes(p.body, visit)
    return types


def _shape_keywords(instr: Instr, nest: list[ir.For], params: list[Any]
                    ) -> tuple[dict[str, ir.Expr], dict[str, int]]:
    """Size arguments and int template keywords that make each window param `nest`-shaped."""
    probe = {**{t: _Probe(t) for t in instr.template}, **dict(instr.bound)}
    sizes: dict[str, ir.Expr] = {}
    template: dict[str, int] = {}
    for q in params:
        dims = q.shape(probe) if q.shape is not None else ()
        if len(dims) != len(nest):
            raise _unsupported(f"{instr.name}'s {q.name} has {len(dims)} dimensions, the loop "
                               f"nest {len(nest)}")
        for dim, lp in zip(dims, nest):
            if isinstance(dim, _Probe):
                if not isinstance(lp.hi, ir.Const) or not isinstance(lp.hi.value, int):
                    raise _unsupported(f"{instr.name}'s {dim.name} needs a constant extent")
                template[dim.name] = lp.hi.value
            elif isinstance(dim, str):
                sizes[dim] = lp.hi
            elif dim != getattr(lp.hi, "value", None):
                raise _unsupported(f"{instr.name}'s {q.name} has extent {dim}")
    return sizes, template


def replace(p: ir.Proc, loop: Any, instr: Any) -> ir.Proc:
    """`p` with the copy nest `loop` (from `p.find_loop`) replaced by a call of `instr`."""
    if not isinstance(loop, ir.For):
        raise _unsupported("the target must be a loop from p.find_loop(name)")
    if not isinstance(instr, Instr):
        raise _unsupported(f"{getattr(instr, 'name', instr)!s} is not a copy instr")
    nest, body = [loop], loop.body
    while len(body) == 1 and isinstance(body[0], ir.For):
        nest.append(body[0])
        body = body[0].body
    if len(body) != 1 or not isinstance(body[0], ir.Assign) or \
            not isinstance(body[0].rhs, ir.Read):
        raise _unsupported(f"the body of loop {loop.iter.name} is not one copy")
    if any(not isinstance(lp.mode, ir.Seq) or lp.lo != ir.Const(0, lp.loc) for lp in nest):
        raise _unsupported(f"loop {loop.iter.name} nests a loop that is not seq(0, n)")
    assign, read = body[0], body[0].rhs
    params = list(instr.params)
    tensors = [q for q in params if q.kind == "tensor"]
    if [q.access for q in tensors] not in (["w", "r"], ["r", "w"]) or \
            any(q.kind not in ("tensor", "size") for q in params):
        raise _unsupported(f"{instr.name} is not a copy from one window to another")
    types = _element_types(p)
    for sym in (assign.buf, read.buf):
        typ = types.get(sym)
        if not isinstance(typ, ir.Tensor) or typ.window:
            raise _unsupported(f"{sym.name} is not a dense tensor (its strides are unknown)")
    windows = {"w": _window(assign.buf, assign.idx, nest, loop.loc),
               "r": _window(read.buf, read.idx, nest, loop.loc)}
    sizes, template = _shape_keywords(instr, nest, tensors)
    by_param = {q.name: (assign.buf if q.access == "w" else read.buf) for q in tensors}
    precisions: dict[str, str] = {}
    for name in instr.precisions:
        typ = types[by_param[name]] if name in by_param else None
        if not isinstance(typ, ir.Tensor):
            raise _unsupported(f"{instr.name}'s precision {name} names no window")
        fixed = dict(instr.bound).get(name)
        if fixed is not None and getattr(fixed, "name", fixed) != typ.base:
            raise _unsupported(f"{instr.name} copies {getattr(fixed, 'name', fixed)}, "
                               f"{by_param[name].name} is {typ.base}")
        if fixed is None:
            precisions[name] = typ.base
    kwargs = instr.instantiate({**template, **precisions})  # ERR-P07 as a bad call would be
    args = tuple(sizes[q.name] if q.kind == "size" else windows[q.access] for q in params)
    callee = instr.root()
    kept = {k: v for k, v in kwargs.items() if k not in dict(callee.bound)}
    call = ir.Call(callee, args, tuple(sorted(kept.items())), (), loop.loc)
    return dataclasses.replace(p, body=_replace_nodes(p.body, lambda n: call if n is loop
                                                      else n))
