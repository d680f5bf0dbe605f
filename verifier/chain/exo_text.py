"""exo-lang source text of an erased proc (CHAIN-1.6).

Reads an erased `ir.Proc` (seq loops, ifs, DRAM allocations, assignments, reductions) and writes
the module text exo-lang's own frontend parses: `@proc def name(...)` with `size` arguments,
tensor arguments `f32[M, K] @ DRAM`, asserts and the body. Binders that share a display name
(an instr's loop `m` under a task loop `m`) get distinct names, since exo-lang resolves names by
text. Non-goals: any construct that is not left after erasure (`UnhandledNode`).
"""

from __future__ import annotations

from verifier.chain.erase import ChainUnsupported
from verifier.diagnostics import UnhandledNode
from verifier.lang.ir import ir

# exo-lang 1.0.0 writes `a * (b % c)` to C as `a * b % c` (it parenthesizes the right operand
# of `-` and `/` only), so a product whose right operand is a product, quotient or remainder is
# written with its operands swapped, and a remainder of one is not written at all.
_C_PRECEDENCE = ("`x % (y * z)` (or `/`, `%`) in an index: exo-lang 1.0.0 compiles it to C "
                 "without the parentheses")

ERASED_NAME = "spork_erased"  # the erased kernel's name in the exo-lang child
HEADER = "from __future__ import annotations\nfrom exo import proc, DRAM\n\n"
_EXO_SCALARS = {"f16": "f16", "f32": "f32", "f64": "f64", "i8": "i8", "ui8": "ui8",
                "ui16": "ui16", "i32": "i32", "R": "R", "float": "f32", "double": "f64",
                "int8_t": "i8", "uint8_t": "ui8", "uint16_t": "ui16", "int32_t": "i32",
                "exo_f16": "f16", "exo_bf16": "f16", "bf16": "f16", "e4m3": "f16"}


def _binders(p: ir.Proc) -> list[ir.Sym]:
    out = [a.name for a in p.args]
    stack = list(reversed(p.body))
    while stack:
        s = stack.pop()
        if isinstance(s, ir.Alloc):
            out.append(s.name)
        elif isinstance(s, ir.For):
            out.append(s.iter)
        for part in (getattr(s, "orelse", ()), getattr(s, "body", ())):
            stack.extend(reversed(part))
    return out


def unique_names(p: ir.Proc) -> dict[ir.Sym, str]:
    """A distinct exo-lang name for every binder of `p` (first binder keeps its name)."""
    names: dict[ir.Sym, str] = {}
    taken: set[str] = set()
    for sym in _binders(p):
        if sym in names:
            continue
        name, n = sym.name, 1
        while name in taken:
            name, n = f"{sym.name}_{n}", n + 1
        names[sym] = name
        taken.add(name)
    return names


class _Writer:
    def __init__(self, names: dict[ir.Sym, str]) -> None:
        self.names = names

    def name(self, sym: ir.Sym) -> str:
        return self.names.get(sym, sym.name)

    def expr(self, e: ir.Expr) -> str:
        match e:
            case ir.Const(value=bool() as v):
                return "True" if v else "False"
            case ir.Const(value=float() as v):
                return repr(v)
            case ir.Const(value=v):
                return str(v)
            case ir.Var(name=n):
                return self.name(n)
            case ir.Read(buf=b, idx=idx):
                return f"{self.name(b)}[{', '.join(self.expr(i) for i in idx)}]" if idx \
                    else self.name(b)
            case ir.BinOp(op="*", lhs=lhs, rhs=ir.BinOp(op="*" | "/" | "%") as rhs) \
                    if not (isinstance(lhs, ir.BinOp) and lhs.op in ("*", "/", "%")):
                return f"({self.expr(rhs)} * {self.expr(lhs)})"  # see _C_PRECEDENCE
            case ir.BinOp(op="%" | "*", rhs=ir.BinOp(op="*" | "/" | "%")):
                raise ChainUnsupported(_C_PRECEDENCE, e.loc, "CHAIN-1.6")
            case ir.BinOp(op=op, lhs=lhs, rhs=rhs):
                return f"({self.expr(lhs)} {op} {self.expr(rhs)})"
            case ir.USub(arg=arg):
                return f"(-{self.expr(arg)})"
            case _:
                raise UnhandledNode(e)

    def typ(self, t: ir.Type) -> str:
        match t:
            case ir.Control(kind=k):
                return k
            case ir.Scalar(name=n):
                return _EXO_SCALARS.get(n, n)
            case ir.Tensor(base=b, shape=shape):
                return f"{_EXO_SCALARS.get(b, b)}[{', '.join(self.expr(d) for d in shape)}]"
            case _:
                raise UnhandledNode(t)

    def stmt(self, s: ir.Stmt, depth: int) -> list[str]:
        pad = "    " * depth
        match s:
            case ir.Pass():
                return [pad + "pass"]
            case ir.Alloc(name=n, typ=t):
                return [pad + f"{self.name(n)}: {self.typ(t)} @ DRAM"]
            case ir.Assign(buf=b, idx=idx, rhs=rhs):
                return [pad + f"{self.expr(ir.Read(b, idx, s.loc))} = {self.expr(rhs)}"]
            case ir.Reduce(buf=b, idx=idx, rhs=rhs):
                return [pad + f"{self.expr(ir.Read(b, idx, s.loc))} += {self.expr(rhs)}"]
            case ir.If(cond=c, body=body, orelse=orelse):
                lines = [pad + f"if {self.expr(c)}:"] + self.block(body, depth + 1)
                if orelse:
                    lines += [pad + "else:"] + self.block(orelse, depth + 1)
                return lines
            case ir.For(iter=it, lo=lo, hi=hi, mode=ir.Seq(), body=body):
                return [pad + f"for {self.name(it)} in seq({self.expr(lo)}, {self.expr(hi)}):"] \
                    + self.block(body, depth + 1)
            case _:
                raise UnhandledNode(s)

    def block(self, stmts: tuple[ir.Stmt, ...], depth: int) -> list[str]:
        out = [line for s in stmts for line in self.stmt(s, depth)]
        return out or ["    " * depth + "pass"]


def proc_source(p: ir.Proc, name: str | None = None) -> str:
    """`@proc def ...` text of erased proc `p` (no imports; see `module_source`)."""
    w = _Writer(unique_names(p))
    args = []
    for a in p.args:
        mem = " @ DRAM" if isinstance(a.typ, ir.Tensor) else ""
        args.append(f"{w.name(a.name)}: {w.typ(a.typ)}{mem}")
    lines = ["@proc", f"def {name or p.name}({', '.join(args)}):"]
    lines += [f"    assert {w.expr(e)}" for e in p.preds]
    lines += w.block(p.body, 1)
    return "\n".join(lines) + "\n"


def module_source(p: ir.Proc, name: str | None = None) -> str:
    return HEADER + proc_source(p, name)
