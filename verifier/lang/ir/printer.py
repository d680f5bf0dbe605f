"""The canonical text of a proc: used in messages, golden tests and the certificate's IR hash.

`proc_text(p, remarks)` also writes comment lines above the statements at given locations
(the debug log's remark files, API-6); without remarks the text is the canonical one.
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import Mapping, Sequence

from verifier.diagnostics import SrcLoc, UnhandledNode
from verifier.lang.ir import ir

Remarks = Mapping[SrcLoc, Sequence[str]]  # comment lines above the statements at a location
NO_REMARKS: Remarks = MappingProxyType({})


def expr_text(e: ir.Expr | ir.Access) -> str:
    match e:
        case ir.Const(value=v):
            return repr(v)
        case ir.Var(name=n):
            return n.name
        case ir.Read(buf=b, idx=idx):
            return f"{b.name}[{', '.join(expr_text(i) for i in idx)}]" if idx else b.name
        case ir.BinOp(op=op, lhs=lhs, rhs=rhs):
            return f"({expr_text(lhs)} {op} {expr_text(rhs)})"
        case ir.USub(arg=arg):
            return f"-{expr_text(arg)}"
        case ir.Stride(buf=b, dim=d):
            return f"stride({b.name}, {d})"
        case ir.Window(buf=b, idx=idx, tensor_map=tm):
            via = f"{tm[0].name}:" if tm is not None else ""
            return f"{via}{b.name}[{', '.join(expr_text(i) for i in idx)}]"
        case ir.Point(pt=pt):
            return expr_text(pt)
        case ir.Interval(lo=lo, hi=hi):
            return f"{expr_text(lo)}:{expr_text(hi)}"
        case _:
            raise UnhandledNode(e)


def _dims_text(shape: tuple[ir.Expr, ...], rings: tuple[ir.RingDim, ...]) -> str:
    """`d0, n @ ring_buffer_by(k), ...`: extents with their ring annotations (DIAL-2)."""
    texts = [expr_text(d) for d in shape]
    for ring in rings:
        texts[ring.dim] += f" @ ring_buffer_by({ring.depth})"
    return ", ".join(texts)


def _type_text(t: ir.Type) -> str:
    match t:
        case ir.Control(kind=k):
            return k
        case ir.Scalar(name=n):
            return n
        case ir.Tensor(base=b, shape=shape, window=w, ring=ring, ring_guard=rg):
            texts = _dims_text(shape, (ring,) if ring is not None else ())
            guarded = f".ring_guarded_by({rg.name})" if rg is not None else ""
            return f"[{b}][{texts}]" if w else f"{b}[{texts}]{guarded}"
        case ir.BarrierType(shape=shape, mech=m, guarded_by=g, ring=ring, pre_arrive=pre,
                            spelled=spelled, extra_rings=extra):
            guard = f"({g.name})" if g else ""
            texts = [_dims_text(shape, ((ring,) if ring is not None else ()) + extra)]
            dims = f"[{', '.join(texts)}]" if shape else ""
            mech = spelled or (f"{m}PreArrive({pre})" if pre else str(m))
            return f"barrier{guard}{dims} @ {mech}"
        case _:
            raise UnhandledNode(t)


def alloc_text(a: ir.Alloc) -> str:
    """An allocation as upstream prints it in messages (`x: f32[2, 16] @ CudaSmemLinear`,
    `z: barrier[4 @ ring_buffer_by(3)] @ CudaMbarrier`)."""
    typ = _type_text(a.typ)
    return f"{a.name.name}: {typ}" if isinstance(a.typ, ir.BarrierType) else \
        f"{a.name.name}: {typ} @ {a.mem}"


def _mode_text(m: ir.LoopMode) -> str:
    match m:
        case ir.Seq():
            return "seq"
        case ir.Par():
            return "par"
        case ir.CudaTasks():
            return "cuda_tasks"
        case ir.CudaThreads(unit=u):
            return f"cuda_threads[{u}]"
        case _:
            raise UnhandledNode(m)


def stmt_lines(s: ir.Stmt, depth: int, remarks: Remarks = NO_REMARKS) -> list[str]:
    pad = "    " * depth
    notes = [pad + ("# " + line).rstrip() for line in remarks.get(s.loc, ())]
    return notes + _stmt_lines(s, depth, pad, remarks)


def _stmt_lines(s: ir.Stmt, depth: int, pad: str, remarks: Remarks) -> list[str]:
    match s:
        case ir.Pass():
            return [pad + "pass"]
        case ir.Alloc(name=n, typ=t, mem=m):
            return [pad + f"{n.name}: {_type_text(t)} @ {m}"]
        case ir.Assign(buf=b, idx=idx, rhs=rhs):
            lhs = f"{b.name}[{', '.join(expr_text(i) for i in idx)}]" if idx else b.name
            return [pad + f"{lhs} = {expr_text(rhs)}"]
        case ir.Reduce(buf=b, idx=idx, rhs=rhs):
            lhs = f"{b.name}[{', '.join(expr_text(i) for i in idx)}]" if idx else b.name
            return [pad + f"{lhs} += {expr_text(rhs)}"]
        case ir.WindowStmt(name=n, rhs=rhs, special=sp):
            extra = f" @ {sp}" if sp is not None else ""
            return [pad + f"{n.name} = {expr_text(rhs)}{extra}"]
        case ir.If(cond=c, body=body, orelse=orelse):
            lines = [pad + f"if {expr_text(c)}:"] + _block(body, depth + 1, remarks)
            if orelse:
                lines += [pad + "else:"] + _block(orelse, depth + 1, remarks)
            return lines
        case ir.For(iter=it, lo=lo, hi=hi, mode=m, body=body):
            return [pad + f"for {it.name} in {_mode_text(m)}({expr_text(lo)}, {expr_text(hi)}):"] \
                + _block(body, depth + 1, remarks)
        case ir.DeviceFunction(cfg=cfg, body=body):
            return [pad + f"with {cfg}:"] + _block(body, depth + 1, remarks)
        case ir.Warps(cfg=cfg, body=body):
            return [pad + f"with {cfg}:"] + _block(body, depth + 1, remarks)
        case ir.Call(callee=c, args=args, kwargs=kw, trailing=tr):
            kws = "".join(f", {k}={v}" for k, v in kw)
            text = f"{c.name}({', '.join(expr_text(a) for a in args)}{kws})"
            text += "".join(f" >> {_bar(t)}" for t in tr)
            return [pad + text]
        case ir.Fence(first=f, second=g):
            return [pad + f"Fence({f}, {g})"]
        case ir.Arrive(first=f, targets=ts):
            return [pad + f"Arrive({f})" + "".join(f" >> {_bar(t)}" for t in ts)]
        case ir.Await(target=t, second=g, n=n):
            return [pad + f"Await({_bar(t)}, {g}, {n})"]
        case _:
            raise UnhandledNode(s)


def _bar(b: ir.BarrierRef) -> str:
    return f"{b.buf.name}[{', '.join(expr_text(i) for i in b.idx)}]" if b.idx else b.buf.name


def _block(stmts: tuple[ir.Stmt, ...], depth: int, remarks: Remarks = NO_REMARKS) -> list[str]:
    out: list[str] = []
    for s in stmts:
        out += stmt_lines(s, depth, remarks)
    return out or ["    " * depth + "pass"]


def proc_text(p: ir.Proc, remarks: Remarks = NO_REMARKS) -> str:
    args = ", ".join(f"{a.name.name}: {_type_text(a.typ)}" + (f" @ {a.mem}" if a.mem else "")
                     for a in p.args)
    lines = [f"def {p.name}({args}):"]
    if p.dialect != "spork26":  # DIAL-1: the rules that apply are part of the proc's meaning
        lines.append(f"    # dialect: {p.dialect}")
    lines += [f"    assert {expr_text(e)}" for e in p.preds]
    lines += _block(p.body, 1, remarks)
    return "\n".join(lines) + "\n"


def ir_hash(p: ir.Proc) -> str:
    return hashlib.sha256(proc_text(p).encode()).hexdigest()
