"""Statement instances as Z3 terms: iterator variables, validity, threads, elements, order.

An instance of a site is a valuation of its enclosing loop iterators (SEM-1.8). Its executing
threads come from the collective guard formula (COLL-7.3, built by verifier.collectives over a
Z3 `Arith`), its trace order is the lexicographic order of SEM-1.8.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import z3

from verifier import collectives
from verifier.collectives.symbolic import Z3Arith
from verifier.diagnostics import Unsupported
from verifier.lang.ir import ir
from verifier.semantics.exprs import CONTROL_RANGES, PY_OPS, Ops, eval_expr, strides_read
from verifier.check.sites import AccessSite, Context
from verifier.encode.terms import address, conj, disj, ge, le, lt, same

Term = z3.ArithRef
MAX_GROUPS = 64  # instances of a collective listed by `Encoder.representative`


def z3_ops(ctx: z3.Context, on_product: "Callable[[], None] | None" = None
           ) -> tuple[Ops[Any], Callable[[Any], Any]]:
    """Z3 terms for IR expressions; `on_product` hears of every product of two non-constant
    terms (the query then leaves linear arithmetic: solver.Query.nonlinear).

    Constant sub-expressions stay Python ints and bools (`RING - 1` is 2, not `(- 3 1)`)
    until they meet a term; the `lift` returned with the table makes a result a term.
    Division and modulo of constants are floor division and non-negative remainder by a
    positive divisor, which is what Z3's `div` and `mod` compute there (LANG-2.6), so a
    folded value is the value of the term it replaces."""
    ints: dict[int, z3.ArithRef] = {}

    def lift(v: Any) -> Any:
        if type(v) is int:
            hit = ints.get(v)
            if hit is None:
                hit = ints[v] = z3.IntVal(v, ctx)
            return hit
        if type(v) is bool:
            return z3.BoolVal(v, ctx)
        return v

    def constant(a: Any) -> bool:
        return type(a) is int or z3.is_int_value(a)

    def add(a: Any, b: Any) -> Any:
        return a + b if type(a) is int and type(b) is int else lift(a) + lift(b)

    def sub(a: Any, b: Any) -> Any:
        return a - b if type(a) is int and type(b) is int else lift(a) - lift(b)

    def mul(a: Any, b: Any) -> Any:
        if type(a) is int and type(b) is int:
            return a * b
        if on_product is not None and not constant(a) and not constant(b):
            on_product()
        return lift(a) * lift(b)

    def divisor(b: Any, what: str) -> Any:
        if type(b) is not int:
            b = b if z3.is_int_value(b) else z3.simplify(b)  # `(CN * SN)` of Python constants
            if not z3.is_int_value(b):
                b = None
            else:
                b = b.as_long()
        if b is None or b <= 0:
            raise Unsupported(f"not supported by spork-verify: {what} by a non-constant or "
                              "non-positive value in an index", code="ERR-V11", rule="LANG-2.6")
        return b

    def div(a: Any, b: Any) -> Any:
        d = divisor(b, "division")
        return PY_OPS.div(a, d) if type(a) is int else lift(a) / lift(d)

    def mod(a: Any, b: Any) -> Any:
        d = divisor(b, "modulo")
        return PY_OPS.mod(a, d) if type(a) is int else lift(a) % lift(d)

    def cmp(op: str, a: Any, b: Any) -> Any:
        """The machine's comparison table; its operators build Z3 terms from lifted ones."""
        if type(a) is int and type(b) is int:
            return PY_OPS.cmp(op, a, b)
        return PY_OPS.cmp(op, lift(a), lift(b))

    return Ops(const=lambda v: v, add=add, sub=sub, mul=mul, div=div, mod=mod,
               neg=lambda a: -a, cmp=cmp, and_=lambda a, b: conj((a, b), ctx),
               or_=lambda a, b: disj((a, b), ctx)), lift


@dataclass
class Instance:
    """One symbolic instance of a site: iterator terms, thread, element, validity."""

    ctx: Context
    iters: dict[ir.Sym, z3.ArithRef]
    thread: z3.ArithRef | None  # local thread index n (None at CPU scope)
    valid: z3.BoolRef
    element: tuple[z3.ArithRef, ...] = ()
    names: dict[str, z3.ArithRef] = field(default_factory=dict)


class Encoder:
    """Builds instance terms in one Z3 context, sharing the size variables."""

    def __init__(self, sizes: Mapping[ir.Sym, ir.Control], preds: tuple[ir.Expr, ...],
                 zctx: z3.Context) -> None:
        self.zctx = zctx
        self.products = 0  # products of non-constant terms built so far (note_product)
        self.ops, self.lift = z3_ops(zctx, self.note_product)
        self.arith = Z3Arith(zctx)
        self.sizes = {s: z3.Int(s.name, zctx) for s in sizes}
        self.assumptions: list[z3.BoolRef] = []
        self._member_cache: dict[tuple[int, ...], z3.BoolRef] = {}
        self._rep_cache: dict[tuple[object, ...], z3.ArithRef] = {}
        self._keep: list[object] = []  # terms whose ids key the caches stay alive
        # facts a closed form relies on, to be discharged as obligations (nest_sums.Premise)
        self.premises: dict[int, Any] = {}
        self.touched: set[int] = set()  # premise keys the closed forms built since reset
        for s, typ in sizes.items():
            if typ.kind in CONTROL_RANGES:  # LANG-2.3, LANG-2.5
                lo, hi = CONTROL_RANGES[typ.kind]
                v = self.sizes[s]
                self.assumptions.append(v >= lo if hi is None else z3.And(v >= lo, v <= hi))
        env: dict[ir.Sym, z3.ArithRef] = dict(self.sizes)
        for p in preds:  # a window's stride: unconstrained but by the asserts (LANG-2.8)
            env.update({k: z3.Int(k.name, zctx) for k in strides_read(p)})
        for p in preds:
            self.assumptions.append(self.boolean(self.lift(eval_expr(p, env, self.ops))))

    def note_product(self) -> None:
        self.products += 1

    def boolean(self, e: z3.ExprRef) -> z3.BoolRef:
        if z3.is_bool(e):
            return e  # type: ignore[return-value]
        return e != 0  # type: ignore[return-value]

    def value(self, e: ir.Expr, env: Mapping[ir.Sym, z3.ArithRef]) -> z3.ArithRef:
        return self.lift(eval_expr(e, {**self.sizes, **env}, self.ops))

    # ------------------------------------------------------------ instances

    def instance(self, ctx: Context, tag: str,
                 pinned: Mapping[ir.Sym, z3.ArithRef] | None = None) -> Instance:
        """Fresh iterator variables for every loop of `ctx` not in `pinned`."""
        iters: dict[ir.Sym, z3.ArithRef] = {}
        names: dict[str, z3.ArithRef] = {}
        for lp in ctx.loops:
            if pinned is not None and lp.sym in pinned:
                iters[lp.sym] = pinned[lp.sym]
            else:
                var = z3.Int(f"{lp.sym.name}#{lp.sym.id}@{tag}", self.zctx)
                iters[lp.sym] = var
                names[f"{tag}.{lp.sym.name}"] = var
        thread = None
        if ctx.cuda:
            thread = z3.Int(f"thread@{tag}", self.zctx)
            names[f"{tag}.thread"] = thread
        inst = Instance(ctx, iters, thread, z3.BoolVal(True, self.zctx), (), names)
        inst.valid = self.validity(inst)
        return inst

    def validity(self, inst: Instance) -> z3.BoolRef:
        ctx = inst.ctx
        parts: list[z3.BoolRef] = []
        env: dict[ir.Sym, z3.ArithRef] = {}
        for lp in ctx.loops:
            v = inst.iters[lp.sym]
            parts.append(ge(v, self.value(lp.lo, env)))
            parts.append(lt(v, self.value(lp.hi, env)))
            env[lp.sym] = v
        for cond, polarity in ctx.conds:
            c = self.boolean(self.value(cond, inst.iters))
            parts.append(c if polarity else z3.Not(c))
        if ctx.cuda and inst.thread is not None:
            parts.append(self.member(ctx, inst.thread, inst.iters))
        return conj(parts, self.zctx)

    def member(self, ctx: Context, n: z3.ArithRef, iters: Mapping[ir.Sym, z3.ArithRef]
               ) -> z3.BoolRef:
        """n executes the instance of `ctx` with thread-loop values `iters` (COLL-7.3)."""
        key = (id(ctx.tiling), address(n),
               tuple(address(iters[s]) for s in ctx.thread_iters))
        hit = self._member_cache.get(key)
        if hit is None:
            hit = self._member_of_constant(ctx, n, iters) if z3.is_const(n) and \
                not z3.is_int_value(n) else self._member(ctx, n, iters)
            self._member_cache[key] = hit
            self._keep.append((n, tuple(iters[s] for s in ctx.thread_iters)))
        return hit

    def _member_of_constant(self, ctx: Context, n: z3.ArithRef,
                            iters: Mapping[ir.Sym, z3.ArithRef]) -> z3.BoolRef:
        """`_member` for a thread variable: the formula is built once per instance with a
        placeholder thread and the variable substituted in, the same term `_member` builds
        (both are uninterpreted constants, which nothing folds), at a C call's cost; the
        quantified chains ask it for a fresh link thread each (visibility.py)."""
        placeholder = z3.Int("thread@member", self.zctx)
        key = (id(ctx.tiling), -1, tuple(address(iters[s]) for s in ctx.thread_iters))
        template = self._member_cache.get(key)
        if template is None:
            template = self._member_cache[key] = self._member(ctx, placeholder, iters)
            self._keep.append(tuple(iters[s] for s in ctx.thread_iters))
        if address(n) == address(placeholder):
            return template
        return z3.substitute(template, (placeholder, n))

    def _member(self, ctx: Context, n: z3.ArithRef, iters: Mapping[ir.Sym, z3.ArithRef]
                ) -> z3.BoolRef:
        assert ctx.device is not None
        dev = ctx.device.cfg
        keyed = {s: iters[s] for s in ctx.thread_iters}
        return conj((n >= 0, n < dev.num_threads,
                     collectives.membership(ctx.tiling, n, keyed, self.arith, dev)), self.zctx)

    def representative(self, ctx: Context, iters: Mapping[ir.Sym, z3.ArithRef]
                       ) -> z3.ArithRef | None:
        """A thread term that executes the instance of `ctx` with these thread-loop values
        whenever any does: the lowest thread of each instance's ground-truth set
        (`collectives.thread_groups`, COLL-4.4), selected by an if-chain over the values
        (−1 outside them). None when the collective has too many instances to list (more
        than `MAX_GROUPS`). A chain using it still states membership, so the term only
        offers one more witness thread, never asserts anything (specs/verification.md E4)."""
        assert ctx.device is not None
        groups = collectives.thread_groups(ctx.tiling, ctx.device.cfg)
        if len(groups.groups) > MAX_GROUPS:
            return None
        key = (id(ctx.tiling), tuple(address(iters[s]) for s in groups.keys))
        hit = self._rep_cache.get(key)
        if hit is None:
            hit = z3.IntVal(-1, self.zctx)
            for values, threads in sorted(groups.groups.items(), reverse=True):
                here = conj([iters[s] == v for s, v in zip(groups.keys, values)], self.zctx)
                hit = z3.If(here, min(threads), hit)
            self._rep_cache[key] = hit
            self._keep.append(tuple(iters[s] for s in groups.keys))
        return hit

    def thread_iter_terms(self, ctx: Context, n: z3.ArithRef) -> dict[ir.Sym, z3.ArithRef]:
        """E_y(n): the thread-loop iterator values of the instance containing thread n."""
        assert ctx.device is not None
        dev = ctx.device.cfg
        x = n % dev.blockDim
        r = n / dev.blockDim
        out = {}
        for sym in ctx.thread_iters:
            guard = ctx.tiling.guard_of(sym)
            assert guard is not None, f"no guard for {sym}"
            out[sym] = guard.expr.to_term(x, r, self.arith)
        return out

    def element_terms(self, site: AccessSite, inst: Instance, tag: str
                      ) -> tuple[tuple[z3.ArithRef, ...], z3.BoolRef]:
        """The touched element: points, or a fresh variable per window interval (SEM-4.3)."""
        elems: list[z3.ArithRef] = []
        parts: list[z3.BoolRef] = []
        for k, (pt, iv) in enumerate(zip(site.element.points, site.element.intervals)):
            if pt is not None:
                elems.append(self.value(pt, inst.iters))
                continue
            assert iv is not None
            var = z3.Int(f"elem{k}@{tag}", self.zctx)
            inst.names[f"{tag}.elem{k}"] = var
            parts.append(var >= self.value(iv[0], inst.iters))
            parts.append(var < self.value(iv[1], inst.iters))
            elems.append(var)
        return tuple(elems), conj(parts, self.zctx)


def before(a: Instance, b: Instance, zctx: z3.Context) -> z3.BoolRef:
    """a precedes b in the sequential trace (SEM-1.8)."""
    loops_b = {lp.sym for lp in b.ctx.loops}
    common = [lp.sym for lp in a.ctx.loops if lp.sym in loops_b]
    result: z3.BoolRef | bool = a.ctx.path < b.ctx.path
    for sym in reversed(common):
        va, vb = a.iters[sym], b.iters[sym]
        if address(va) == address(vb):  # one term: va < vb is false, va == vb true
            continue
        if isinstance(result, bool):
            result = le(va, vb) if result else lt(va, vb)
        else:
            result = disj((lt(va, vb), conj((same(va, vb), result), zctx)), zctx)
    return z3.BoolVal(result, zctx) if isinstance(result, bool) else result


def equal_on(a: Instance, b: Instance, syms: tuple[ir.Sym, ...], zctx: z3.Context
             ) -> z3.BoolRef:
    return conj([same(a.iters[s], b.iters[s]) for s in syms
                 if s in a.iters and s in b.iters and
                 address(a.iters[s]) != address(b.iters[s])], zctx)
