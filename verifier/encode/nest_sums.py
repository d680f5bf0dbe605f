"""Closed-form instance counts over non-rectangular affine loop nests, by symbolic summation
(sympy), converted to Z3 terms (semantics.md §12.4, specs/verification.md "Counters").

A barrier site inside `for i in seq(0, n): for j in seq(0, i): ...` has i·(i−1)/2 + j
instances before iteration (i, j): the sum of the inner extents over the earlier outer
iterations. sympy sums the polynomial extents; the result has rational coefficients and is
emitted as (integer polynomial) / (common denominator), an exact integer division. Loop bounds
may use sizes, outer iterators and `/`, `%` of terms free of the summed iterators (those become
opaque atoms); anything else is `unsupported`.

Summation follows Karr's convention (Σ_{i=a}^{b} with b < a − 1 is not zero), so the closed form
is exact only where every inner extent is non-negative. That fact is a *premise*: each one is
returned to the caller, which discharges it as an obligation of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import sympy
import z3

from verifier.diagnostics import SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.ir.guards import free_syms
from verifier.check.sites import Loop
from verifier.encode.instances import Encoder


@dataclass
class Premise:
    """A loop extent that must be non-negative wherever its enclosing loops are in range."""

    loc: SrcLoc
    negated: list[z3.BoolRef]
    names: dict[str, z3.ArithRef]


@dataclass
class NestSums:
    """sympy view of one site's loops: iterator symbols and the atoms they stand for in Z3."""

    enc: Encoder
    loops: tuple[Loop, ...]
    atoms: dict[sympy.Symbol, z3.ArithRef] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.iters = {lp.sym: sympy.Symbol(f"i{k}_{lp.sym.name}", integer=True)
                      for k, lp in enumerate(self.loops)}
        for sym, var in self.enc.sizes.items():
            self.atoms[sympy.Symbol(f"size_{sym.name}", integer=True)] = var

    # ------------------------------------------------------------ IR -> sympy

    def expr(self, e: ir.Expr) -> sympy.Expr:
        match e:
            case ir.Const(value=v) if isinstance(v, int) and not isinstance(v, bool):
                return sympy.Integer(v)
            case ir.Var(name=name) if name in self.iters:
                return self.iters[name]
            case ir.Var(name=name) if name in self.enc.sizes:
                return sympy.Symbol(f"size_{name.name}", integer=True)
            case ir.USub(arg=arg):
                return -self.expr(arg)
            case ir.BinOp(op="+" | "-" | "*" as op, lhs=lhs, rhs=rhs):
                a, b = self.expr(lhs), self.expr(rhs)
                return a + b if op == "+" else a - b if op == "-" else a * b
            case ir.BinOp(op="/" | "%"):
                return self.opaque(e)
        raise Unsupported("not supported by spork-verify: a loop bound outside affine "
                          "expressions of sizes and iterators in a barrier site's nest",
                          e.loc, code="ERR-V11", rule="SEM-6.4")

    def opaque(self, e: ir.Expr) -> sympy.Symbol:
        """`a / c` or `a % c` over sizes only: one atom whose Z3 value is computed directly."""
        if free_syms(e) & set(self.iters):
            raise Unsupported("not supported by spork-verify: `/` or `%` of a loop iterator in "
                              "the bounds of a barrier site's nest", e.loc, code="ERR-V11",
                              rule="SEM-6.4")
        atom = sympy.Symbol(f"atom{len(self.atoms)}", integer=True)
        self.atoms[atom] = self.enc.value(e, {})
        return atom

    def bind(self, sym: ir.Sym, value: z3.ArithRef) -> sympy.Symbol:
        """An atom standing for a Z3 value (a point's iterator, a pinned thread iterator)."""
        atom = sympy.Symbol(f"atom{len(self.atoms)}", integer=True)
        self.atoms[atom] = value
        return atom

    # ------------------------------------------------------------ sums

    def instances_inside(self, k: int, pinned: Mapping[ir.Sym, sympy.Expr]) -> sympy.Expr:
        """Instances of the site per iteration of its k-th loop (k = -1: in total)."""
        total: sympy.Expr = sympy.Integer(1)
        for lp in reversed(self.loops[k + 1:]):
            var = self.iters[lp.sym]
            if lp.sym in pinned:
                total = total.subs(var, pinned[lp.sym])
                continue
            total = sympy.summation(total, (var, self.expr(lp.lo), self.expr(lp.hi) - 1))
        return sympy.expand(total)

    def before(self, k: int, upto: sympy.Expr, pinned: Mapping[ir.Sym, sympy.Expr]
               ) -> sympy.Expr:
        """Instances in the iterations lo .. upto − 1 of the k-th loop."""
        lp = self.loops[k]
        var = self.iters[lp.sym]
        return sympy.expand(sympy.summation(self.instances_inside(k, pinned),
                                            (var, self.expr(lp.lo), upto - 1)))

    def to_z3(self, e: sympy.Expr, env: Mapping[sympy.Symbol, z3.ArithRef]) -> z3.ArithRef:
        """Exact integer value of a polynomial with rational coefficients."""
        num, den = sympy.fraction(sympy.together(sympy.expand(e)))
        if not den.is_Integer:
            raise Unsupported("not supported by spork-verify: a barrier count that is not a "
                              "polynomial", None, code="ERR-V11", rule="SEM-6.4")
        term = _poly_to_z3(sympy.expand(num), {**self.atoms, **env}, self.enc.zctx,
                           self.enc.note_product)
        return term if den == 1 else term / int(den)

    # ------------------------------------------------------------ premises

    def require_nonnegative_extents(self, pinned: Mapping[ir.Sym, object],
                                    premises: dict[int, Premise]) -> None:
        """Premise per summed loop: hi ≥ lo for every in-range value of the loops outside it."""
        for k, lp in enumerate(self.loops):
            if lp.sym in pinned or lp.kind != "seq":
                continue
            self.enc.touched.add(lp.sym.id)
            if lp.sym.id in premises:
                continue
            env: dict[ir.Sym, z3.ArithRef] = {}
            conds: list[z3.BoolRef] = []
            names: dict[str, z3.ArithRef] = {}
            for outer in self.loops[:k]:
                v = z3.Int(f"{outer.sym.name}#{outer.sym.id}@extent", self.enc.zctx)
                conds += [v >= self.enc.value(outer.lo, env), v < self.enc.value(outer.hi, env)]
                env[outer.sym] = v
                names[f"extent.{outer.sym.name}"] = v
            lo, hi = self.enc.value(lp.lo, env), self.enc.value(lp.hi, env)
            premises[lp.sym.id] = Premise(lp.loc, conds + [hi < lo], names)


def _poly_to_z3(e: sympy.Expr, env: Mapping[sympy.Symbol, z3.ArithRef], zctx: z3.Context,
                on_product: Callable[[], None]) -> z3.ArithRef:
    """An integer polynomial as a Z3 term (products stay products; solver.check tries a
    linear abstraction of them first)."""
    terms = e.args if e.is_Add else (e,)
    total: z3.ArithRef = z3.IntVal(0, zctx)
    for term in terms:
        coeff, factors = term.as_coeff_mul()
        if not coeff.is_Integer:
            raise Unsupported(f"not supported by spork-verify: barrier count term {e}", None,
                              code="ERR-V11", rule="SEM-6.4")
        product: list[z3.ArithRef] = []
        for f in factors:
            base, exp = f.as_base_exp()
            if not (base.is_Symbol and exp.is_Integer and int(exp) > 0):
                raise Unsupported(f"not supported by spork-verify: barrier count term {e}",
                                  None, code="ERR-V11", rule="SEM-6.4")
            product += [env[base]] * int(exp)
        if not product:
            total = total + int(coeff)
        else:
            if len(product) > 1:
                on_product()
            monomial = product[0] if len(product) == 1 else z3.Product(*product)
            total = total + (monomial if coeff == 1 else int(coeff) * monomial)
    return total
