"""Parsing of expression statements, barrier declarations and barrier expressions (stage P,
language.md LANG-3.6..3.8, §5.1-5.4).

Reads the Python AST of `name: barrier(...)[...] @ Mech`, `Fence(...)`, `Arrive(...) >> e`,
`Await(e, ...)`, `instr(...) >> e` and barrier expressions, through the `ProcParser` that owns
the scopes; produces `ir.BarrierType`, `ir.Fence`/`ir.Arrive`/`ir.Await`/`ir.Call` and
`ir.BarrierRef` with every `:` closed to `0:extent`. Non-goals: which mechanisms, collectives and multicast patterns are legal (stage A/L,
`verifier.check.static_barriers` and `barrier_exprs`).
"""

from __future__ import annotations

import ast

from typing import Any

from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.lang.stdlib.instrs import INSTRS, Instr
from verifier.lang.stdlib.timelines import InstrTL, SyncTL

from verifier.lang.parse import parse_ring
from verifier.lang.parse.parser_view import ParserView

OTHER_DIALECT = {
    "CudaAsync": "use per-instruction instr-tls (spork26 has no CudaAsync blocks)",
    "ReverseArrive": "use a second barrier paired by `b2: barrier(b1) @ CudaMbarrier`",
    "ReverseAwait": "use a second barrier paired by `b2: barrier(b1) @ CudaMbarrier`",
}


def is_barrier_type(node: ast.expr) -> bool:
    inner = node.value if isinstance(node, ast.Subscript) else node
    inner = inner.func if isinstance(inner, ast.Call) else inner
    return isinstance(inner, ast.Name) and inner.id == "barrier"


def barrier_type(p: ParserView, name: str, node: ast.expr, s: ast.stmt,
                 mem_node: ast.expr | None) -> ir.BarrierType:
    """`barrier`, `barrier[d, ...]`, `barrier(other)[...]` (ERR-P18, P19, P23); endgame's
    `barrier[d @ ring_buffer_by(k)] @ CudaMbarrierPreArrive(n)` (parse_ring). Rules: LANG-5.2,
    DIAL-2"""
    shape: tuple[ir.Expr, ...] = ()
    ring: ir.RingDim | None = None
    if isinstance(node, ast.Subscript):
        dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        shape, ring = parse_ring.barrier_dims(p, list(dims))
        node = node.value
    guard: ir.Sym | None = None
    if isinstance(node, ast.Call):
        if len(node.args) != 1 or node.keywords:
            raise p.err(node, "barrier(...) takes exactly 1 parameter", "ERR-P18", "LANG-5.2")
        arg = node.args[0]
        if not isinstance(arg, ast.Name):
            raise p.err(arg, "barrier(...) expects a single identifier argument", "ERR-P18",
                        "LANG-5.2")
        if arg.id == name:
            raise p.err(arg, f"barrier({arg.id}) must not reference itself", "ERR-P23",
                        "LANG-5.2")
        target = p.lookup(arg.id)
        if target is None or target.kind != "barrier":
            raise p.err(arg, f"barrier({arg.id}) must name a barrier", "ERR-P23", "LANG-5.2")
        guard = target.sym
    if mem_node is None:
        raise p.err(s, "barrier allocation needs @ CudaMbarrier | CudaCommitGroup | "
                    "CudaClusterSync", "ERR-P19", "LANG-5.2")
    mech, pre, spelled = parse_ring.mechanism(p, mem_node)
    return ir.BarrierType(shape, mech, guard, ring, pre, spelled)


def sync_tl(p: ParserView, node: ast.expr) -> SyncTL:
    value = p.py_eval(node)
    if isinstance(value, SyncTL):
        return value
    hint = ""
    if isinstance(value, InstrTL) and value.value.endswith("_instr"):
        hint = f" (maybe {value.value[:-len('_instr')]}?)"
    raise p.err(node, f"Expected sync-tl, not {ast.unparse(node)}{hint}", "ERR-P12", "LANG-5.1")


def _no_keywords(p: ParserView, node: ast.Call, name: str) -> None:
    if node.keywords:
        raise p.err(node, f"Unknown keyword '{node.keywords[0].arg}' for {name}()", "ERR-P13",
                    "LANG-5.1")


def fence(p: ParserView, node: ast.Call, s: ast.stmt) -> ir.Stmt:
    """`Fence(L1, L2)` (ERR-P13, P14). Rules: LANG-5.1"""
    _no_keywords(p, node, "Fence")
    if len(node.args) != 2:
        raise p.err(node, "Fence expects 2 arguments", "ERR-P14", "LANG-5.1")
    return ir.Fence(sync_tl(p, node.args[0]), sync_tl(p, node.args[1]), p.loc(s))


def arrive(p: ParserView, node: ast.Call, trailing: list[ast.expr], s: ast.stmt) -> ir.Stmt:
    """`Arrive(L1[, 1]) >> e0 >> e1 ...` (ERR-P13..P15). Rules: LANG-5.1"""
    _no_keywords(p, node, "Arrive")
    if len(node.args) not in (1, 2):
        raise p.err(node, "Arrive expects 2 arguments", "ERR-P14", "LANG-5.1")
    if len(node.args) == 2:
        n = p.py_eval(node.args[1])
        if n != 1:
            raise p.err(node.args[1], f"Expect N=1 for Arrive, not {n!r}", "ERR-P15", "LANG-5.1")
    targets = tuple(barrier_ref(p, t) for t in trailing)
    return ir.Arrive(sync_tl(p, node.args[0]), targets, p.loc(s))


def await_(p: ParserView, node: ast.Call, s: ast.stmt) -> ir.Stmt:
    """`Await(e, L2, N)` (ERR-P13, P14, P16). Rules: LANG-5.1"""
    _no_keywords(p, node, "Await")
    if len(node.args) != 3:
        raise p.err(node, "Await expects 3 arguments", "ERR-P14", "LANG-5.1")
    n = p.py_eval(node.args[2])
    if not isinstance(n, int) or isinstance(n, bool):
        raise p.err(node.args[2], f"Await N={n!r}; expected int", "ERR-P16", "LANG-5.1")
    target = barrier_ref(p, node.args[0])
    return ir.Await(target, sync_tl(p, node.args[1]), n, p.loc(s))


def barrier_ref(p: ParserView, node: ast.expr) -> ir.BarrierRef:
    """`z`, `z[i, j]`, `z[i, :]` (ERR-P17, P22); `:` and `lo:` are closed with the extent.

    Rules: LANG-5.4"""
    if isinstance(node, ast.UnaryOp):
        raise p.err(node, "expected window-like expression for barrier (the +bar/-bar syntax is "
                    "not part of spork26)", "ERR-P17", "LANG-1.2")
    name_node, idx_nodes = node, []
    if isinstance(node, ast.Subscript):
        name_node = node.value
        idx_nodes = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not isinstance(name_node, ast.Name):
        raise p.err(node, "expected window-like expression for barrier", "ERR-P17", "LANG-5.4")
    b = p.lookup(name_node.id)
    if b is None or b.kind != "barrier":
        typ = "undeclared" if b is None else _type_text(b.typ)
        raise p.err(node, f"BarrierExpr requires barrier type, not {name_node.id}: {typ}",
                    "ERR-P22", "LANG-5.4")
    assert isinstance(b.typ, ir.BarrierType)
    if len(idx_nodes) != len(b.typ.shape):
        raise p.err(node, f"expected {len(b.typ.shape)} indices for BarrierExpr", "ERR-P22",
                    "LANG-5.4")
    idx = tuple(p.close_interval(p.access(i), extent)
                for i, extent in zip(idx_nodes, b.typ.shape))
    return ir.BarrierRef(b.sym, idx, p.loc(node))


def expr_stmt(p: ParserView, value: ast.expr, s: ast.stmt) -> ir.Stmt:
    """A top-level expression statement: `>>` chains, Fence/Arrive/Await, calls (ERR-P01..P03).

    Rules: LANG-3.8, LANG-5.1"""
    trailing: list[ast.expr] = []
    node = value
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.RShift):
        trailing.insert(0, node.right)
        node = node.left
    if isinstance(node, ast.BinOp):
        raise p.err(value, "Only >> BinOp supported at top level", "ERR-P01", "LANG-3.8")
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        if trailing:
            raise p.err(value, "Only SyncStmt and Call can take >> trailing barrier exprs",
                           "ERR-P02", "LANG-3.8")
        raise p.err(value, f"unsupported expression statement `{ast.unparse(value)}`",
                    "ERR-P01", "LANG-3.8")
    name = node.func.id
    if name in ("Fence", "Await") and trailing:
        raise p.err(value, f"{name} cannot take >> trailing barrier exprs", "ERR-P03",
                    "LANG-5.1")
    if name == "Fence":
        return fence(p, node, s)
    if name == "Arrive":
        return arrive(p, node, trailing, s)
    if name == "Await":
        return await_(p, node, s)
    return call(p, node, trailing, s)


def call(p: ParserView, node: ast.Call, trailing: list[ast.expr], s: ast.stmt) -> ir.Stmt:
    """A call of an instr or proc (ERR-P04..P07, P21, P28). Rules: LANG-3.6, LANG-3.7"""
    name = node.func.id  # type: ignore[attr-defined]
    if name in OTHER_DIALECT or name.startswith(("cudaMemcpyAsync_htod_", "cudaMemcpyAsync_dtoh_",
                                                  "cudaMemsetAsync0_")) and name not in INSTRS:
        hint = OTHER_DIALECT.get(name, "use the sized host-copy instrs of language.md §6")
        raise p.err(node, f"{name} is not part of the spork26 dialect; {hint}", "ERR-P28",
                    "LANG-1.2")
    callee = p.py_env.get(name)
    if hasattr(callee, "instr_for_call"):  # a user-defined `@instr` template (user_instrs)
        callee = _user_instr(p, callee, node)
    if not isinstance(callee, (Instr, ir.Proc)):
        raise p.err(node, f"expected called object {name} to be a procedure or "
                    "InstrTemplate", "ERR-P05", "LANG-3.6")
    kwargs: dict[str, Any] = {}
    for k in node.keywords:
        if isinstance(callee, ir.Proc):
            raise p.err(node, f"{name}: Cannot take keyword arguments", "ERR-P06",
                           "LANG-3.6")
        kwargs[str(k.arg)] = p.py_eval(k.value)
    if isinstance(callee, Instr):
        try:
            kwargs = dict(callee.instantiate(kwargs))
        except RejectedInput as e:
            raise RejectedInput(e.message, p.loc(node), e.rule, e.code) from None
        nparams = len(callee.params)
        # the IR names the instr `partial` started from, with every keyword it fixed, so a
        # stdlib instr still travels by name (LOAD-9); a module-level alias keeps its own
        callee = callee.root()
        kwargs = {k: v for k, v in kwargs.items() if k not in dict(callee.bound)}
    else:
        nparams = len(callee.args)
    if len(node.args) != nparams:
        raise p.err(node, f"{name} got {len(node.args)} arguments but need {nparams}",
                    "ERR-P21", "LANG-3.6")
    if len(trailing) > 1:
        raise p.err(node, f"{name} cannot have more than 1 trailing barrier expr",
                    "ERR-P04", "LANG-3.7")
    if trailing and isinstance(callee, Instr) and callee.trailing_mech is None:
        # structural, so found before any other rule, as upstream's memory analysis finds it
        raise p.err(node, f"{name} does not take trailing barrier expression >> "
                    f"{ast.unparse(trailing[0])}", "ERR-A09", "LANG-3.7")
    args = tuple(_call_arg(p, a) for a in node.args)
    refs = tuple(barrier_ref(p, t) for t in trailing)
    return ir.Call(callee, args, tuple(sorted(kwargs.items())), refs, p.loc(s))


def _user_instr(p: ParserView, template: Any, node: ast.Call) -> Instr:
    """The concrete instr of a call of a user-defined `@instr` template: its keywords are
    evaluated and the template's `instance` runs now, as upstream instantiates at parse time
    (LANG-3.6, LANG-3.11); the call's keywords are then checked against the result."""
    kwargs = {str(k.arg): p.py_eval(k.value) for k in node.keywords}
    try:
        return template.instr_for_call(kwargs)
    except RejectedInput as e:
        raise RejectedInput(e.message, p.loc(node), e.rule, e.code) from None


def _call_arg(p: ParserView, node: ast.expr) -> ir.Expr:
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return p.window(node)
    if isinstance(node, ast.Name):
        b = p.lookup(node.id)
        if b is not None and b.kind in ("data", "window") and isinstance(b.typ, ir.Tensor):
            return p.window(node)
    return p.expr(node)


def _type_text(t: object) -> str:
    if isinstance(t, ir.Tensor):
        return f"{'[' + t.base + ']' if t.window else t.base}[{len(t.shape)}-d]"
    if isinstance(t, ir.Scalar):
        return t.name
    return getattr(t, "kind", type(t).__name__)
