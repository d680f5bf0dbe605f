"""The IR shared by every interpretation: frozen dataclasses with source locations.

Grammar (ASDL-style)::

    proc    = Proc(str name, arg* args, expr* preds, stmt* body, str dialect)
    arg     = Arg(Sym name, type typ, mem? mem)
    type    = Control(kind) | Scalar(str name) | Tensor(str base, expr* shape, bool window)
            | BarrierType(expr* shape, mech, Sym? guarded_by, RingDim? ring, int pre_arrive)
    ring    = RingDim(int dim, int depth)          -- endgame: `n @ ring_buffer_by(depth)`
    stmt    = Alloc(Sym name, type typ, mem mem)
            | Assign(Sym buf, expr* idx, expr rhs) | Reduce(Sym buf, expr* idx, expr rhs)
            | WindowStmt(Sym name, Window rhs)
            | If(expr cond, stmt* body, stmt* orelse) | Pass()
            | For(Sym iter, expr lo, expr hi, loopmode mode, stmt* body)
            | DeviceFunction(CudaDeviceFunction cfg, stmt* body)
            | Warps(CudaWarps cfg, stmt* body)
            | Call(instr, arg_expr* args, kw kwargs, BarrierRef* trailing)
            | Fence(synctl first, synctl second)
            | Arrive(synctl first, BarrierRef* targets)
            | Await(BarrierRef target, synctl second, int n)
    expr    = Const(value) | Var(Sym name) | Read(Sym buf, expr* idx)
            | BinOp(str op, expr lhs, expr rhs) | USub(expr arg) | Stride(Sym buf, int dim)
            | Window(Sym buf, access* idx)
    access  = Point(expr pt) | Interval(expr lo, expr hi)
    loopmode= Seq() | Par() | CudaTasks() | CudaThreads(unit)

Nodes hold structure only; meaning lives in the interpreters (collectives, semantics, encode,
codegen). Stdlib objects (memories, units, sync-tls, instrs, device-function configs) are
referenced by value; they are immutable.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from typing import Any

from verifier.lang.ir.cursor import (  # noqa: F401
    AllocCursor, Gap, InvalidCursor, RingExtent, StmtRef, forward_cursor, ring_buffer_by,
)

from verifier.diagnostics import RejectedInput, SrcLoc, Unsupported

_sym_ids = itertools.count(1)  # never reset: Sym.fresh ids are unique in the process, which
#                                 renaming copies (cut_loop, call inlining) rely on


@dataclass(frozen=True, slots=True)
class Sym:
    """A binder: display name plus unique id, so two variables named `i` never collide."""

    name: str
    id: int

    @staticmethod
    def fresh(name: str) -> "Sym":
        return Sym(name, next(_sym_ids))

    def __str__(self) -> str:
        return self.name


# ---------------------------------------------------------------- types

CONTROL_KINDS = ("size", "index", "bool", "stride")
SCALAR_TYPES = ("f16", "bf16", "f32", "f64", "i8", "ui8", "ui16", "i32", "e4m3", "R",
                "exo_f16", "exo_bf16", "float", "double", "int8_t", "uint8_t", "uint16_t",
                "int32_t")


@dataclass(frozen=True, slots=True)
class Control:
    kind: str  # one of CONTROL_KINDS


@dataclass(frozen=True, slots=True)
class Scalar:
    name: str


@dataclass(frozen=True, slots=True)
class Tensor:
    base: str
    shape: tuple["Expr", ...]
    window: bool = False
    ring: "RingDim | None" = None  # endgame managed ring buffer of data (DIAL-18)
    ring_guard: "Sym | None" = None  # `.ring_guarded_by(b)`: the barrier b (DIAL-18)


@dataclass(frozen=True, slots=True)
class RingDim:
    """The managed ring-buffer dimension of an endgame barrier array (`n @ ring_buffer_by(d)`):
    its position among the dimensions and the number of physical slots. Rules: DIAL-2"""

    dim: int
    depth: int


@dataclass(frozen=True, slots=True)
class BarrierType:
    shape: tuple["Expr", ...]
    mech: Any  # a BarrierMechanism class from the stdlib
    guarded_by: Sym | None = None
    ring: RingDim | None = None  # endgame managed ring buffer (DIAL-2)
    pre_arrive: int = 0  # endgame `CudaMbarrierPreArrive(n)`: ring elements < n are complete
    spelled: str = ""  # the mechanism's name as written, when it is not `mech`'s (endgame)
    extra_rings: tuple[RingDim, ...] = ()  # further ring dimensions a rewrite set (ERR-A16)


Type = Control | Scalar | Tensor | BarrierType


def element_type(typ: Type) -> str | None:
    """The scalar type of a data type's elements (`f32[n]` and `f32` -> "f32"); None for
    control and barrier types."""
    if isinstance(typ, Tensor):
        return typ.base
    if isinstance(typ, Scalar):
        return typ.name
    return None


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Const:
    value: int | float | bool
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Var:
    """A control value: size/index/bool argument or loop iterator."""

    name: Sym
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Read:
    """A data read `x[i, j]` (no indices for a scalar)."""

    buf: Sym
    idx: tuple["Expr", ...]
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class BinOp:
    op: str  # + - * / % < > <= >= == and or
    lhs: "Expr"
    rhs: "Expr"
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class USub:
    arg: "Expr"
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Stride:
    """`stride(buf, dim)` of a window parameter (a dense tensor's is folded: `dense_stride`)."""

    buf: Sym
    dim: int
    loc: SrcLoc = field(compare=False)

    @property
    def key(self) -> Sym:
        """The name its value takes in an environment of control values (LANG-2.8): one per
        (buffer, dimension), negative ids so it never meets a `Sym.fresh` binder."""
        return Sym(f"stride({self.buf.name}, {self.dim})", -(self.buf.id * 64 + self.dim))


def dense_stride(dims: tuple["Expr", ...], loc: SrcLoc) -> "Expr":
    """`stride(x, d)` of a dense tensor: the product of the extents `dims` after `d`, as
    upstream computes it (LANG-2.6)."""
    out: Expr = Const(1, loc)
    for extent in dims:
        out = extent if isinstance(out, Const) and out.value == 1 else BinOp("*", out, extent, loc)
    return out


@dataclass(frozen=True, slots=True)
class Point:
    pt: "Expr"
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Interval:
    lo: "Expr"
    hi: "Expr"
    loc: SrcLoc = field(compare=False)


Access = Point | Interval


@dataclass(frozen=True, slots=True)
class Window:
    """A window `x[a:b, i]`; also the form of tensor arguments passed to instrs.

    `tensor_map` names the window statement `tm = x[...] @ Sm90_tensorMap(...)` the window was
    taken through (its Sym and SpecialWindow), so a TMA instr sees the map it is given."""

    buf: Sym
    idx: tuple[Access, ...]
    loc: SrcLoc = field(compare=False)
    tensor_map: tuple[Sym, Any] | None = None


Expr = Const | Var | Read | BinOp | USub | Stride | Window


# ---------------------------------------------------------------- loop modes


@dataclass(frozen=True, slots=True)
class Seq:
    pragma_unroll: int | None = None


@dataclass(frozen=True, slots=True)
class Par:
    pass


@dataclass(frozen=True, slots=True)
class CudaTasks:
    pass


@dataclass(frozen=True, slots=True)
class CudaThreads:
    unit: Any  # a CollUnit from verifier.lang.stdlib.units


LoopMode = Seq | Par | CudaTasks | CudaThreads


# ---------------------------------------------------------------- statements


class StmtCursor:
    """What upstream's statement cursors offer before any rewrite uses them: the gaps
    before and after a statement (API-5). A gap is only ever given to a rewrite, and every
    rewrite taking one is `unsupported` (API-2), so nothing is claimed from it."""

    __slots__ = ()

    def before(self) -> "Gap":
        return Gap(self, "before")  # type: ignore[arg-type]

    def after(self) -> "Gap":
        return Gap(self, "after")  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class BarrierRef:
    """`z`, `z[i, :]`: Point entries name a distributed iterator, Interval entries multicast."""

    buf: Sym
    idx: tuple[Access, ...]
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Alloc(StmtCursor):
    name: Sym
    typ: Type
    mem: Any  # Memory class/instance, or a BarrierMechanism for barrier allocations
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Assign(StmtCursor):
    buf: Sym
    idx: tuple[Expr, ...]
    rhs: Expr
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Reduce(StmtCursor):
    buf: Sym
    idx: tuple[Expr, ...]
    rhs: Expr
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class WindowStmt(StmtCursor):
    name: Sym
    rhs: Window
    special: Any = None  # e.g. an Sm90_tensorMap instance for `w = x[...] @ Sm90_tensorMap(...)`
    loc: SrcLoc = field(compare=False, default=None)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class If(StmtCursor):
    cond: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Pass(StmtCursor):
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class For(StmtCursor):
    iter: Sym
    lo: Expr
    hi: Expr
    mode: LoopMode
    body: tuple["Stmt", ...]
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class DeviceFunction(StmtCursor):
    cfg: Any  # CudaDeviceFunction
    body: tuple["Stmt", ...]
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Warps(StmtCursor):
    cfg: Any  # CudaWarps
    body: tuple["Stmt", ...]
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Call(StmtCursor):
    """A call of an instruction (or a plain proc, which is unsupported in CUDA code)."""

    callee: Any  # an Instr from the stdlib, or a Proc
    args: tuple[Expr, ...]
    kwargs: tuple[tuple[str, Any], ...]
    trailing: tuple[BarrierRef, ...]
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Fence(StmtCursor):
    first: Any  # SyncTL
    second: Any  # SyncTL
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Arrive(StmtCursor):
    first: Any  # SyncTL
    targets: tuple[BarrierRef, ...]
    loc: SrcLoc = field(compare=False)


@dataclass(frozen=True, slots=True)
class Await(StmtCursor):
    target: BarrierRef
    second: Any  # SyncTL
    n: int
    loc: SrcLoc = field(compare=False)


Stmt = (Alloc | Assign | Reduce | WindowStmt | If | Pass | For | DeviceFunction | Warps | Call
        | Fence | Arrive | Await)


STMT_TYPES = (Alloc, Assign, Reduce, WindowStmt, If, Pass, For, DeviceFunction, Warps, Call,
              Fence, Arrive, Await)
EXPR_TYPES = (Const, Var, Read, BinOp, USub, Stride, Window)


# ---------------------------------------------------------------- procs


@dataclass(frozen=True, slots=True)
class Arg:
    """A proc parameter. `tensor_map`: the SpecialWindow of a tensor-map parameter
    `x: [T][...] @ Sm90_tensorMap(...)` (LANG-3.4), whose `mem` is its source memory."""

    name: Sym
    typ: Type
    mem: Any
    loc: SrcLoc = field(compare=False)
    tensor_map: Any = None


# How a script whose rewrites spork-verify does not reproduce (API-2) gets verified: by
# upstream's own rewrites (SCHED-1). Every API-2 message ends with it.
EXO_GPU_HINT = ("to verify the proc Exo-GPU's own rewrites build, give --exo-gpu-python PYTHON "
                "(or set SPORK_VERIFY_EXO_GPU_PYTHON) naming a Python in which upstream Exo-GPU "
                "is installed; or verify the proc as written before scheduling")


class UnsupportedMethod(Unsupported, AttributeError):
    """An upstream `Procedure` method spork-verify lacks; an AttributeError too, so that
    `getattr(p, name, default)` keeps working."""


class ProcName(str):
    """A proc's name; also callable, since upstream's scripts read it as `p.name()`."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)


# The concrete machine lives in verifier.semantics, which lang may not import: the process
# entry (the loading child, tests) installs `sync_check(proc, sizes)` in this slot.
SYNC_CHECK_HOOK: list[Any] = [None]


@dataclass(frozen=True, slots=True)
class Proc:
    """A parsed proc, with the few read-only methods of upstream's `Procedure` that scripts
    call between building a proc and compiling it (the rewrites are in `scheduling`)."""

    name: str
    args: tuple[Arg, ...]
    preds: tuple[Expr, ...]
    body: tuple[Stmt, ...]
    loc: SrcLoc = field(compare=False)
    source_lines: tuple[str, ...] = field(compare=False, default=())
    dialect: str = "spork26"  # which Exo-GPU dialect's rules apply (specs/dialects.md DIAL-1)

    def __post_init__(self) -> None:
        if type(self.name) is not ProcName:
            object.__setattr__(self, "name", ProcName(self.name))

    def find_alloc_or_arg(self, name: str) -> AllocCursor:
        """The first allocation or argument named `name`, in source order (upstream's
        cursor; `scheduling.delete_buffer` and friends take it)."""
        for a in self.args:
            if a.name.name == name:
                return AllocCursor(a, self)
        stack = list(reversed(self.body))
        while stack:
            s = stack.pop()
            if isinstance(s, Alloc) and s.name.name == name:
                return AllocCursor(s, self)
            for part in (getattr(s, "orelse", ()), getattr(s, "body", ())):
                stack.extend(reversed(part))
        raise LookupError(f"{self.name} has no allocation or argument named {name}")

    def forward(self, cursor: Any) -> Any:
        """`cursor` (of an older version of this proc) as a cursor of this proc: an argument
        by its binder, a statement, allocation or gap as `cursor.forward_cursor` finds it
        again (API-1, API-7); LookupError when this proc no longer has it."""
        if isinstance(cursor, AllocCursor) and isinstance(cursor.node, Arg):
            for a in self.args:
                if a.name is cursor.node.name:
                    return AllocCursor(a, self)
            raise LookupError(f"{self.name} no longer has {cursor.node.name.name}")
        return forward_cursor(self, cursor)

    def find_loop(self, pattern: str) -> For:
        """The loop named `pattern` (`"i"`, or `"i #k"` for its k-th occurrence from 0), in
        source order: upstream's cursor for `replace` (API-1) and `cut_loop` (API-4)."""
        name, _, nth = str(pattern).partition("#")
        name = name.strip()
        if not name.isidentifier() or (nth.strip() and not nth.strip().isdigit()):
            raise UnsupportedMethod(f"not supported by spork-verify: find_loop({pattern!r}) "
                                    f"(only a loop's name, or `name #k`); {EXO_GPU_HINT}",
                                    rule="API-2",
                                    code="ERR-V11")
        found: list[For] = []
        stack = list(reversed(self.body))
        while stack:
            s = stack.pop()
            if isinstance(s, For) and s.iter.name == name:
                found.append(s)
            for part in (getattr(s, "orelse", ()), getattr(s, "body", ())):
                stack.extend(reversed(part))
        k = int(nth) if nth.strip() else 0
        if k >= len(found):
            raise RejectedInput(f"find_loop({pattern!r}): {self.name} has {len(found)} loop(s) "
                                f"over {name}", rule="API-4", code="ERR-P00")
        return found[k]

    def find(self, pattern: str) -> "Stmt":
        """The statement `pattern` names, in source order (API-5): an assignment `"x = e"` or
        reduction `"x += e"`, any part of it `_`, or the k-th match with `"... #k"` (from 0);
        `"for i in _: _"` is `find_loop("i")`. Other patterns are `unsupported` (API-2)."""
        text, _, nth = str(pattern).partition("#")
        try:
            tree = ast.parse(text.strip()).body
        except SyntaxError:
            tree = []
        if len(tree) == 1 and isinstance(tree[0], ast.For) and \
                isinstance(tree[0].target, ast.Name):
            return self.find_loop(f"{tree[0].target.id} #{nth}" if nth.strip()
                                  else tree[0].target.id)
        kinds = {ast.Assign: Assign, ast.AugAssign: Reduce}
        want = tree[0] if len(tree) == 1 else None
        if type(want) not in kinds or (nth.strip() and not nth.strip().isdigit()) or \
                (isinstance(want, ast.AugAssign) and not isinstance(want.op, ast.Add)) or \
                (isinstance(want, ast.Assign) and len(want.targets) != 1):
            raise UnsupportedMethod(f"not supported by spork-verify: Procedure.find("
                                    f"{pattern!r}) (only `x = e`, `x += e` or a loop "
                                    f"pattern); {EXO_GPU_HINT}", rule="API-2",
                                    code="ERR-V11")
        assert want is not None
        target = want.targets[0] if isinstance(want, ast.Assign) else want.target
        found = [s for s in statements(self.body) if isinstance(s, kinds[type(want)]) and
                 _pattern_matches(target, Read(s.buf, s.idx, s.loc)) and
                 _pattern_matches(want.value, s.rhs)]
        k = int(nth) if nth.strip() else 0
        if k >= len(found):
            raise RejectedInput(f"find({pattern!r}): {self.name} has {len(found)} matching "
                                "statement(s)", rule="API-5", code="ERR-P00")
        return found[k]

    def __getattr__(self, name: str) -> Any:
        """Upstream `Procedure` methods spork-verify lacks (cursors, `find_loop`, ...) are
        `unsupported` naming the method, never a bare AttributeError (API-2)."""
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedMethod(f"not supported by spork-verify: Procedure.{name} (upstream's "
                                f"cursor and scheduling API); {EXO_GPU_HINT}", rule="API-2",
                                code="ERR-V11")

    def sync_check(self, **sizes: int) -> None:
        """Run the concrete abstract machine at `sizes`; raise with its first finding."""
        check = SYNC_CHECK_HOOK[0]
        if check is None:
            raise RuntimeError("sync_check needs the concrete machine: import "
                               "verifier.semantics.sync_check first")
        check(self, sizes)


def statements(body: tuple[Stmt, ...]) -> list[Stmt]:
    """Every statement of `body`, nested ones included, in source order."""
    out: list[Stmt] = []
    for s in body:
        out.append(s)
        for part in ("body", "orelse"):
            out.extend(statements(getattr(s, part, ())))
    return out


_PATTERN_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}


def _pattern_matches(pat: ast.expr, e: Expr) -> bool:
    """Whether the expression `e` has the shape of the pattern `pat` (`_`: anything)."""
    match pat:
        case ast.Name(id="_"):
            return True
        case ast.Name(id=name):
            return (isinstance(e, Var) and e.name.name == name) or \
                (isinstance(e, Read) and e.buf.name == name and not e.idx)
        case ast.Constant(value=v):
            return isinstance(e, Const) and e.value == v
        case ast.Subscript(value=ast.Name(id=name), slice=sl):
            idx = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            return isinstance(e, Read) and e.buf.name == name and len(idx) == len(e.idx) \
                and all(_pattern_matches(p, i) for p, i in zip(idx, e.idx))
        case ast.BinOp(op=op, left=a, right=b):
            return isinstance(e, BinOp) and e.op == _PATTERN_OPS.get(type(op)) and \
                _pattern_matches(a, e.lhs) and _pattern_matches(b, e.rhs)
        case ast.UnaryOp(op=ast.USub(), operand=a):
            return isinstance(e, USub) and _pattern_matches(a, e.arg)
    return False
