"""Quasi-affine terms and formulas: the one symbolic language of the chain proof (CHAIN-4).

A term is an integer affine combination of variables and floors `floor(t / d)` (d > 0 a
constant); a formula is a Boolean combination of `t >= 0` and `t == 0`. Both readings of a
formula are in this package: `isl_bridge` writes it as isl text (isl proposes last writers and
maps), `smt` writes it as a Z3 term (Z3 checks every proposal). Nothing here solves anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Floor:
    """floor(arg / d), d > 0."""

    arg: "Aff"
    d: int


Key = str | Floor


def _key_order(k: Key) -> str:
    return k if isinstance(k, str) else f"~floor({aff_text(k.arg)}/{k.d})"


@dataclass(frozen=True, slots=True)
class Aff:
    """sum(coef * key) + const, keys in canonical order (so equal terms compare equal)."""

    coeffs: tuple[tuple[Key, int], ...]
    const: int = 0

    @staticmethod
    def of(coeffs: Mapping[Key, int], const: int = 0) -> "Aff":
        items = sorted(((k, c) for k, c in coeffs.items() if c != 0),
                       key=lambda kc: _key_order(kc[0]))
        return Aff(tuple(items), const)

    @staticmethod
    def var(name: str) -> "Aff":
        return Aff(((name, 1),), 0)

    @staticmethod
    def num(value: int) -> "Aff":
        return Aff((), value)

    def is_const(self) -> bool:
        return not self.coeffs

    def __add__(self, other: "Aff | int") -> "Aff":
        other = _aff(other)
        acc = dict(self.coeffs)
        for k, c in other.coeffs:
            acc[k] = acc.get(k, 0) + c
        return Aff.of(acc, self.const + other.const)

    def __neg__(self) -> "Aff":
        return Aff(tuple((k, -c) for k, c in self.coeffs), -self.const)

    def __sub__(self, other: "Aff | int") -> "Aff":
        return self + (-_aff(other))

    def scale(self, factor: int) -> "Aff":
        return Aff.of({k: c * factor for k, c in self.coeffs}, self.const * factor)

    def floordiv(self, d: int) -> "Aff":
        assert d > 0, d
        if d == 1:
            return self
        if self.is_const():
            return Aff.num(self.const // d)
        if all(c % d == 0 for _, c in self.coeffs):  # floor((d*x + c) / d) = x + floor(c / d)
            return Aff.of({k: c // d for k, c in self.coeffs}, self.const // d)
        return Aff(((Floor(self, d), 1),), 0)

    def mod(self, d: int) -> "Aff":
        return self - self.floordiv(d).scale(d)

    def vars(self) -> set[str]:
        out: set[str] = set()
        for k, _ in self.coeffs:
            out |= {k} if isinstance(k, str) else k.arg.vars()
        return out

    def subst(self, env: Mapping[str, "Aff"]) -> "Aff":
        acc = Aff.num(self.const)
        for k, c in self.coeffs:
            if isinstance(k, str):
                acc = acc + (env[k] if k in env else Aff.var(k)).scale(c)
            else:
                acc = acc + k.arg.subst(env).floordiv(k.d).scale(c)
        return acc


def _aff(x: "Aff | int") -> Aff:
    return x if isinstance(x, Aff) else Aff.num(x)


def aff_text(a: Aff) -> str:
    """isl's text of a term (also readable in messages)."""
    parts = []
    for k, c in a.coeffs:
        name = k if isinstance(k, str) else f"floor(({aff_text(k.arg)})/{k.d})"
        parts.append(name if c == 1 else f"-{name}" if c == -1 else f"{c}*{name}")
    if a.const or not parts:
        parts.append(str(a.const))
    return " + ".join(parts).replace("+ -", "- ")


# ---------------------------------------------------------------- formulas


@dataclass(frozen=True, slots=True)
class Cmp:
    """`aff >= 0` (eq False) or `aff == 0` (eq True)."""

    aff: Aff
    eq: bool


@dataclass(frozen=True, slots=True)
class And:
    parts: tuple["Formula", ...]


@dataclass(frozen=True, slots=True)
class Or:
    parts: tuple["Formula", ...]


@dataclass(frozen=True, slots=True)
class Not:
    arg: "Formula"


Formula = Cmp | And | Or | Not
TRUE: Formula = And(())
FALSE: Formula = Or(())


def ge(a: Aff | int, b: Aff | int) -> Formula:
    return _cmp(_aff(a) - _aff(b), False)


def le(a: Aff | int, b: Aff | int) -> Formula:
    return ge(b, a)


def lt(a: Aff | int, b: Aff | int) -> Formula:
    return ge(_aff(b) - 1, a)


def eq(a: Aff | int, b: Aff | int) -> Formula:
    return _cmp(_aff(a) - _aff(b), True)


def _cmp(a: Aff, is_eq: bool) -> Formula:
    if a.is_const():
        return TRUE if (a.const == 0 if is_eq else a.const >= 0) else FALSE
    return Cmp(a, is_eq)


def conj(parts: Iterable[Formula]) -> Formula:
    out: list[Formula] = []
    for p in parts:
        if p == FALSE:
            return FALSE
        if isinstance(p, And):
            out += p.parts
        else:
            out.append(p)
    return out[0] if len(out) == 1 else And(tuple(out))


def disj(parts: Iterable[Formula]) -> Formula:
    out: list[Formula] = []
    for p in parts:
        if p == TRUE:
            return TRUE
        if isinstance(p, Or):
            out += p.parts
        else:
            out.append(p)
    return out[0] if len(out) == 1 else Or(tuple(out))


def neg(f: Formula) -> Formula:
    """Negation pushed to the comparisons (isl's text has no `not`)."""
    match f:
        case Cmp(aff=a, eq=False):
            return lt(a, 0)
        case Cmp(aff=a, eq=True):
            return disj([lt(a, 0), ge(a, 1)])
        case And(parts=ps):
            return disj(neg(p) for p in ps)
        case Or(parts=ps):
            return conj(neg(p) for p in ps)
        case Not(arg=a):
            return a
    raise TypeError(f)


def subst(f: Formula, env: Mapping[str, Aff]) -> Formula:
    return map_affs(f, lambda a: a.subst(env))


def map_affs(f: Formula, fn: Callable[[Aff], Aff]) -> Formula:
    match f:
        case Cmp(aff=a, eq=e):
            return _cmp(fn(a), e)
        case And(parts=ps):
            return conj(map_affs(p, fn) for p in ps)
        case Or(parts=ps):
            return disj(map_affs(p, fn) for p in ps)
        case Not(arg=a):
            return neg(map_affs(a, fn))
    raise TypeError(f)


def formula_vars(f: Formula) -> set[str]:
    match f:
        case Cmp(aff=a):
            return a.vars()
        case And(parts=ps) | Or(parts=ps):
            return set().union(*(formula_vars(p) for p in ps)) if ps else set()
        case Not(arg=a):
            return formula_vars(a)
    raise TypeError(f)


def formula_text(f: Formula) -> str:
    """isl's text of a formula (`and`, `or`, comparisons; negations pushed inwards)."""
    match f:
        case Cmp(aff=a, eq=e):
            return f"{aff_text(a)} {'=' if e else '>='} 0"
        case And(parts=ps):
            return " and ".join(f"({formula_text(p)})" for p in ps) if ps else "1 = 1"
        case Or(parts=ps):
            return " or ".join(f"({formula_text(p)})" for p in ps) if ps else "1 = 0"
        case Not(arg=a):
            return formula_text(neg(a))
    raise TypeError(f)


def lex_lt(a: tuple[Aff, ...], b: tuple[Aff, ...]) -> Formula:
    """a precedes b in lexicographic order; equal-length vectors. Components that are equal
    as terms are skipped, constant components decide statically."""
    out: list[Formula] = []
    prefix: list[Formula] = []
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        if x.is_const() and y.is_const():
            if x.const < y.const:
                out.append(conj(prefix))
            break
        out.append(conj([*prefix, lt(x, y)]))
        prefix.append(eq(x, y))
    return disj(out)


def evaluate(a: Aff, env: Mapping[str, int]) -> int:
    """The value of a term at integer values of its variables (floor division)."""
    total = a.const
    for k, c in a.coeffs:
        total += c * (env[k] if isinstance(k, str) else evaluate(k.arg, env) // k.d)
    return total
