"""A sync-free loop nest (a *region*) of the trace enumerated at once with numpy: every access
instance of the region as arrays of element boxes, thread collectives and trace positions.

Within a region no Fence, Arrive or Await runs, so no record's visibility changes: each
element's checks and history update depend only on that element's history and on the accesses
to it in trace order (SEM-2.6, SEM-4.4, SEM-4.5). `batch_apply` uses this to check and record a
whole region per buffer instead of statement instance by statement instance (fast.py).

A region is a `seq` or `cuda_threads` loop whose body holds only loops of those kinds, `if`s,
assignments and reductions, instr calls without trailing barriers or owner-only distributed
windows, non-SMEM allocations, `pass` and window statements (`region_ok`). Anything the
enumeration cannot do with arrays raises `NotBatched` before any machine state changes, and the
caller runs the region statement by statement instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verifier import collectives
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import Memory
from verifier.lang.stdlib.instrs import Instr, callee_distributed
from verifier.semantics.access import instr_args
from verifier.semantics.exprs import compile_expr, data_reads
from verifier.semantics.rules import AccessKind
from verifier.semantics.uniq import unique_inverse, unique_values

_POS_LIMIT = 1 << 62
_VALUE_LIMIT = 1 << 40
_SCALAR_LIMIT = 1 << 20  # three such factors stay below 2^63
_COL_TABLE = 1 << 16  # thread-iterator keys memoised per context up to this many


class NotBatched(Exception):
    """The region is run statement by statement (nothing of the machine changed yet)."""


def region_ok(s: ir.Stmt) -> bool:
    """Whether `s` is a region (see the module docstring); structural, sizes not needed."""
    return isinstance(s, ir.For) and isinstance(s.mode, (ir.Seq, ir.CudaThreads)) and \
        all(_stmt_ok(x) for x in s.body)


def _stmt_ok(s: ir.Stmt) -> bool:
    match s:
        case ir.For():
            return region_ok(s)
        case ir.If(body=body, orelse=orelse):
            return all(_stmt_ok(x) for x in body + orelse)
        case ir.Assign() | ir.Reduce() | ir.Pass() | ir.WindowStmt():
            return True
        case ir.Alloc(typ=typ, mem=mem):
            return not isinstance(typ, ir.BarrierType) and isinstance(mem, Memory) and \
                not mem.is_smem
        case ir.Call(callee=callee, trailing=trailing):
            if not isinstance(callee, Instr) or callee.unmodelled or trailing or \
                    callee.tma is not None:
                return False
            return all(not (a.param.owner_only and isinstance(a.arg, ir.Window) and
                            callee_distributed(a.param, a.arg)) and not a.atomic_quals and
                       a.kind is not AccessKind.atomic and not a.param.clip
                       for a in instr_args(s))
        case _:
            return False


@dataclass(eq=False)
class LocalBuf:
    """An allocation inside the region: one fresh buffer per instance of its Alloc, all alive
    only inside the region (elements are keyed by instance and index)."""

    sym: ir.Sym
    shape: tuple[int, ...]
    mem: Memory
    tracked: bool
    instances: int = 0
    entries: dict[Any, Any] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1


@dataclass
class Site:
    """One access of the region (a read or write of an assignment, an argument of a call) with
    all its instances: per dimension the [lo, hi) arrays, the collective of each instance, its
    position in the trace order and (local buffers) the instance of the allocation."""

    buf: Any  # BufInstance | LocalBuf
    kind: AccessKind
    instr_tl: Any
    in_instr: bool
    loc: Any
    lo: list[np.ndarray]
    hi: list[np.ndarray]
    cols: np.ndarray
    pos: np.ndarray
    inst: np.ndarray | None


class Rows:
    """The instances reaching a point of the region: iterator values and trace positions."""

    __slots__ = ("env", "pos", "n")

    def __init__(self, env: dict[Any, np.ndarray], pos: np.ndarray) -> None:
        self.env, self.pos, self.n = env, pos, len(pos)

    def take(self, idx: np.ndarray) -> "Rows":
        return Rows({k: v[idx] for k, v in self.env.items()}, self.pos[idx])

    def repeat(self, counts: np.ndarray | int) -> "Rows":
        return Rows({k: np.repeat(v, counts) for k, v in self.env.items()},
                    np.repeat(self.pos, counts))


class Enumerator:
    """Walks a region's statements over arrays of instances (the machine `m` evaluates the
    scalars outside the region, tilings and collectives)."""

    def __init__(self, m: Any, ctx: Any) -> None:
        self.m = m
        self.ctx = ctx
        self.sites: list[Site] = []
        self.locals: dict[ir.Sym, LocalBuf] = {}
        self.tracked = m.tracked  # SEM-2.1, computed once per run
        self.rows_seen = 0

    # ------------------------------------------------------------ expressions

    def value(self, e: ir.Expr, rows: Rows) -> Any:
        fn = self.m.compiled.get(id(e))
        if fn is None:
            fn = self.m.compiled[id(e)] = compile_expr(e)
        env = dict(self.m.env)
        env.update(rows.env)
        try:
            v = fn(env)
        except Exception as err:  # an expression the arrays cannot carry: per instance
            raise NotBatched(str(err)) from None
        if isinstance(v, np.ndarray):
            if v.dtype == bool:
                return v
            if v.dtype.kind not in "iu":
                raise NotBatched("non-integer control value")
            if v.size and (v.max() > _VALUE_LIMIT or v.min() < -_VALUE_LIMIT):
                raise NotBatched("values near int64's range")  # Python ints never wrap
            return v.astype(np.int64, copy=False)
        if isinstance(v, (bool, np.bool_)):
            return np.full(rows.n, bool(v))
        return np.full(rows.n, int(v), dtype=np.int64)

    # ------------------------------------------------------------ statements

    def run(self, s: ir.For) -> None:
        if any(abs(v) > _SCALAR_LIMIT for v in self.m.env.values()):
            raise NotBatched("sizes too large for int64 products")
        self.block((s,), Rows({}, np.zeros(1, dtype=np.int64)), self.ctx, 1)

    def block(self, stmts: tuple[ir.Stmt, ...], rows: Rows, ctx: Any, scale: int) -> None:
        n = len(stmts)
        if scale * n >= _POS_LIMIT:
            raise NotBatched("trace positions overflow")
        base = rows.pos * n
        for j, s in enumerate(stmts):
            if rows.n == 0:
                return
            self.stmt(s, Rows(rows.env, base + j), ctx, scale * n)

    def stmt(self, s: ir.Stmt, rows: Rows, ctx: Any, scale: int) -> None:
        match s:
            case ir.For():
                self.loop(s, rows, ctx, scale)
            case ir.If(cond=cond, body=body, orelse=orelse):
                c = self.value(cond, rows)
                self.block(body, rows.take(np.flatnonzero(c)), ctx, scale)
                self.block(orelse, rows.take(np.flatnonzero(~c)), ctx, scale)
            case ir.Assign(buf=buf, idx=idx, rhs=rhs) | ir.Reduce(buf=buf, idx=idx, rhs=rhs):
                reads = data_reads(rhs)
                k = len(reads) + 1
                if scale * k >= _POS_LIMIT:
                    raise NotBatched("trace positions overflow")
                cols = self.cols(rows, ctx)
                tl = self.m.scope_instr_tl(ctx)
                for j, r in enumerate(reads):
                    self.point(r.buf, r.idx, AccessKind.read, tl, False, r.loc, rows, cols,
                               rows.pos * k + j)
                kind = AccessKind.write if isinstance(s, ir.Assign) else AccessKind.read_write
                self.point(buf, idx, kind, tl, False, s.loc, rows, cols, rows.pos * k + k - 1)
            case ir.Call():
                self.call(s, rows, ctx, scale)
            case ir.Alloc(name=name, typ=typ, mem=mem):
                self.alloc(name, typ, mem, rows)
            case ir.Pass() | ir.WindowStmt():
                pass
            case _:
                raise NotBatched(type(s).__name__)

    def loop(self, s: ir.For, rows: Rows, ctx: Any, scale: int) -> None:
        lo, hi = self.value(s.lo, rows), self.value(s.hi, rows)
        counts = np.maximum(hi - lo, 0)
        trip = int(counts.max()) if rows.n else 0
        if trip == 0:
            return
        if scale * trip >= _POS_LIMIT:
            raise NotBatched("trace positions overflow")
        inner = rows.repeat(counts)
        starts = np.cumsum(counts) - counts
        offset = np.arange(inner.n, dtype=np.int64) - np.repeat(starts, counts)
        inner.env[s.iter] = np.repeat(lo, counts) + offset
        inner.pos = inner.pos * trip + offset
        self.rows_seen += inner.n
        if isinstance(s.mode, ir.CudaThreads):
            if (lo != lo[0]).any() or (hi != hi[0]).any():
                raise NotBatched("cuda_threads bounds vary")
            l0, h0 = int(lo[0]), int(hi[0])
            tiling = self.m.cached(s, lambda: collectives.tile_threads(
                ctx.tiling, s.iter, s.iter.name, l0, h0, s.mode.unit, ctx.dev))
            ctx = ctx.inside(tiling, ctx.warp_name, ctx.iters + ((s.iter, None),))
        self.block(s.body, inner, ctx, scale * trip)

    def alloc(self, name: ir.Sym, typ: ir.Type, mem: Any, rows: Rows) -> None:
        shape = tuple(self.m.value(d) for d in typ.shape) if isinstance(typ, ir.Tensor) else ()
        tracked = name in self.tracked and not mem.sync_exempt and self.m.keeps(name)
        buf = self.locals.setdefault(name, LocalBuf(name, shape, mem, tracked))
        if buf.shape != shape:
            raise NotBatched("allocation shape varies")
        rows.env[buf] = np.arange(buf.instances, buf.instances + rows.n, dtype=np.int64)
        buf.instances += rows.n

    # ------------------------------------------------------------ accesses

    def cols(self, rows: Rows, ctx: Any) -> np.ndarray:
        """The collective of each instance, as the machine's collective ids."""
        m = self.m
        if not ctx.cuda:
            return np.full(rows.n, m.col_id(m.collective(ctx)), dtype=np.int64)
        arrays = [(k, rows.env[sym]) for k, (sym, v) in enumerate(ctx.iters) if v is None]
        if not arrays:
            return np.full(rows.n, m.col_id(m.collective(ctx)), dtype=np.int64)
        key = np.zeros(rows.n, dtype=np.int64)
        lows = []
        bound = 1
        for _, a in arrays:
            lo, span = int(a.min()), int(a.max() - a.min()) + 1
            key = key * span + (a - lo)
            lows.append((lo, span))
            bound *= span
        if bound > _COL_TABLE:
            uniq, inv = unique_inverse(key)
            return np.asarray(self._col_ids(uniq, lows, ctx), dtype=np.int64)[inv]
        # key -> collective id, kept per context (tiling, task, outer values) across regions
        memo = (id(ctx.tiling), ctx.task, tuple((id(sym), v) for sym, v in ctx.iters),
                tuple(lows))
        table = m.col_tables.get(memo)
        if table is None:
            table = m.col_tables[memo] = np.full(bound, -1, dtype=np.int64)
        ids = table[key]
        if (ids < 0).any():  # collectives not met before under this context
            missing = unique_values(key[ids < 0])
            table[missing] = self._col_ids(missing, lows, ctx)
            ids = table[key]
        return ids

    def _col_ids(self, keys: np.ndarray, lows: list[tuple[int, int]], ctx: Any) -> list[int]:
        """The collective id of each mixed-radix key of the thread iterators' values."""
        m = self.m
        ids = []
        for u in keys.tolist():
            values = []
            for lo, span in reversed(lows):
                values.append(u % span + lo)
                u //= span
            values.reverse()
            it = iter(values)
            iters = tuple((sym, next(it) if v is None else v) for sym, v in ctx.iters)
            ids.append(m.col_id(m.collective(ctx.inside(ctx.tiling, ctx.warp_name, iters))))
        return ids

    def target(self, sym: ir.Sym, rows: Rows) -> tuple[Any, np.ndarray | None]:
        local = self.locals.get(sym)
        if local is not None and local in rows.env:
            return local, rows.env[local]
        if sym in self.m.data_rings:  # DIAL-18: slots and the handoff shadow, one by one
            raise NotBatched("a data ring buffer")
        return self.m.bufs[sym], None

    def point(self, sym: ir.Sym, idx: tuple[ir.Expr, ...], kind: AccessKind, tl: Any,
              in_instr: bool, loc: Any, rows: Rows, cols: np.ndarray, pos: np.ndarray) -> None:
        lo = [self.value(e, rows) for e in idx]
        self.add(sym, kind, tl, in_instr, loc, rows, lo, [v + 1 for v in lo], cols, pos)

    def add(self, sym: ir.Sym, kind: AccessKind, tl: Any, in_instr: bool, loc: Any,
            rows: Rows, lo: list[np.ndarray], hi: list[np.ndarray], cols: np.ndarray,
            pos: np.ndarray) -> None:
        buf, inst = self.target(sym, rows)
        self.sites.append(Site(buf, kind, tl, in_instr, loc, lo, hi, cols, pos, inst))

    def call(self, s: ir.Call, rows: Rows, ctx: Any, scale: int) -> None:
        args = self.m.cached(s, lambda: instr_args(s))
        k = len(args)
        if scale * k >= _POS_LIMIT:
            raise NotBatched("trace positions overflow")
        cols = self.cols(rows, ctx)
        boxes = []
        for a in args:
            lo, hi = [], []
            idx = a.arg.idx if isinstance(a.arg, ir.Window) else \
                tuple(ir.Point(e, a.arg.loc) for e in a.arg.idx)
            for d in idx:
                if isinstance(d, ir.Point):
                    v = self.value(d.pt, rows)
                    lo.append(v)
                    hi.append(v + 1)
                else:
                    lo.append(self.value(d.lo, rows))
                    hi.append(self.value(d.hi, rows))
            boxes.append((lo, hi))
        for j, (a, (lo, hi)) in enumerate(zip(args, boxes)):
            self.add(a.buf, a.kind, s.callee.instr_tl, True, s.loc, rows, lo, hi, cols,
                     rows.pos * k + j)
