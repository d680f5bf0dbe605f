"""Two of upstream's rewrites reproduced exactly (API-4): `cut_loop` and `inline_window`.

`cut_loop(p, loop, c)` splits `for i in seq(lo, hi)` into `seq(lo, c)` and `seq(c, hi)`, the
second a copy with fresh binders (upstream alpha-renames it). Upstream refuses the cut unless
`lo <= c <= hi` follows from the proc's assertions; here the same is shown by interval bounds
over the size arguments (each at least 1, narrowed by assertions `n > k`, `n >= k`, `n == k`),
and a cut it cannot show is refused too: the verified proc is always the one upstream builds.
`inline_window(p, "w = _")` deletes the window statement `w`; its uses already name the
underlying buffer (the parser composes windows), so only their tensor-map mark is dropped.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.lang.rewrite.scheduling import _replace_nodes

Bound = tuple[int | None, int | None]  # (lowest, highest) value; None = unbounded


def _size_bounds(p: ir.Proc) -> dict[ir.Sym, Bound]:
    bounds: dict[ir.Sym, Bound] = {a.name: (1, None) for a in p.args
                                   if isinstance(a.typ, ir.Control) and a.typ.kind == "size"}
    for pred in p.preds:
        if not (isinstance(pred, ir.BinOp) and isinstance(pred.lhs, ir.Var) and
                isinstance(pred.rhs, ir.Const) and isinstance(pred.rhs.value, int) and
                pred.lhs.name in bounds):
            continue
        lo, hi = bounds[pred.lhs.name]
        k = pred.rhs.value
        if pred.op in (">", ">=", "=="):
            lo = max(lo or 0, k + (pred.op == ">"))
        if pred.op in ("<", "<=", "=="):
            new_hi = k - (pred.op == "<")
            hi = new_hi if hi is None else min(hi, new_hi)
        bounds[pred.lhs.name] = (lo, hi)
    return bounds


def bound(e: ir.Expr, env: dict[ir.Sym, Bound]) -> Bound:
    """Sound lowest and highest values of an index expression over `env`."""
    match e:
        case ir.Const(value=v) if isinstance(v, int) and not isinstance(v, bool):
            return (v, v)
        case ir.Var(name=sym) if sym in env:
            return env[sym]
        case ir.USub(arg=a):
            lo, hi = bound(a, env)
            return (None if hi is None else -hi, None if lo is None else -lo)
        case ir.BinOp(op="+" | "-" as op, lhs=a, rhs=b):
            (alo, ahi), (blo, bhi) = bound(a, env), bound(b, env)
            if op == "-":
                blo, bhi = (None if bhi is None else -bhi, None if blo is None else -blo)
            return (None if alo is None or blo is None else alo + blo,
                    None if ahi is None or bhi is None else ahi + bhi)
        case ir.BinOp(op="*" | "/" as op, lhs=a, rhs=ir.Const(value=k)) \
                if isinstance(k, int) and k > 0:
            lo, hi = bound(a, env)
            f = (lambda x: x * k) if op == "*" else (lambda x: x // k)
            return (None if lo is None else f(lo), None if hi is None else f(hi))
        case ir.BinOp(op="*", lhs=ir.Const() as c, rhs=a):
            return bound(ir.BinOp("*", a, c, e.loc), env)
    return (None, None)


def fresh_binders(node: Any) -> dict[ir.Sym, ir.Sym]:
    """Each binder in `node` (loop iterator, allocation, window statement) to a fresh symbol
    of the same name: what alpha-renaming a copy of `node` substitutes."""
    binders: dict[ir.Sym, ir.Sym] = {}

    def collect(n: Any) -> None:
        if isinstance(n, (ir.For, ir.Alloc, ir.WindowStmt)):
            sym = n.iter if isinstance(n, ir.For) else n.name
            binders.setdefault(sym, ir.Sym.fresh(sym.name))

    _walk(node, collect)
    return binders


def _renamed(loop: ir.For) -> ir.For:
    """A copy of `loop` with every binder in it fresh (upstream's Alpha_Rename)."""
    binders = fresh_binders(loop)
    return _replace_nodes(loop, lambda n: binders.get(n, n) if isinstance(n, ir.Sym) else n)


def _walk(node: Any, visit: Any) -> None:
    visit(node)
    if isinstance(node, tuple):
        for x in node:
            _walk(x, visit)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type) and \
            type(node).__module__ == ir.__name__:
        for f in dataclasses.fields(node):
            _walk(getattr(node, f.name), visit)


def cut_loop(p: ir.Proc, loop: Any, cut_point: Any) -> ir.Proc:
    """`p` with `loop` split at `cut_point` (API-4)."""
    target = p.find_loop(loop) if isinstance(loop, str) else loop
    if not isinstance(target, ir.For) or not isinstance(target.mode, ir.Seq):
        raise RejectedInput("cut_loop: expected a seq loop (a name or `p.find_loop(name)`)",
                            rule="API-4", code="ERR-P00")
    if not isinstance(cut_point, int) or isinstance(cut_point, bool):
        raise RejectedInput(f"cut_loop: the cut point must be an int, not {cut_point!r}",
                            rule="API-4", code="ERR-P00")
    env = _size_bounds(p)
    cut = ir.Const(cut_point, target.loc)
    lo_hi, hi_lo = bound(target.lo, env)[1], bound(target.hi, env)[0]
    for ok, what in ((lo_hi is not None and lo_hi <= cut_point, "`lo` <= `cut_point`"),
                     (hi_lo is not None and hi_lo >= cut_point, "`cut_point` <= `hi`")):
        if not ok:
            raise RejectedInput(f"cut_loop({target.iter.name}, {cut_point}): cannot show "
                                f"{what} from the proc's assertions", target.loc,
                                rule="API-4", code="ERR-P00")
    first = dataclasses.replace(target, hi=cut)
    second = _renamed(dataclasses.replace(target, lo=cut))
    return _replace_nodes(p, lambda n: (first, second) if n is target else n)


def inline_window(p: ir.Proc, pattern: Any) -> ir.Proc:
    """`p` without the window statement `pattern` names (`"w = _"` or `"w"`) (API-4)."""
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*(?:=\s*_\s*)?", pattern) \
        if isinstance(pattern, str) else None
    stmt = None
    if m is not None:
        stmt = next((s for s in ir.statements(p.body) if isinstance(s, ir.WindowStmt)
                     and s.name.name == m.group(1)), None)
    if stmt is None:
        raise RejectedInput(f"inline_window({pattern!r}): no window statement of that name",
                            rule="API-4", code="ERR-P00")
    sym = stmt.name

    def change(n: Any) -> Any:
        if n is stmt:
            return ()
        if isinstance(n, ir.Window) and n.tensor_map is not None and n.tensor_map[0] == sym:
            return dataclasses.replace(n, tensor_map=None)
        return n
    return _replace_nodes(p, change)
