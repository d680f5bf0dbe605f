"""The `Arith` interface: collective formulas written once, read over ints or over Z3 terms.

Reads nothing; produces the interface and its concrete implementation `IntArith`. The Z3
implementation lives in `symbolic.py`, the only module of this package that imports z3.
Non-goals: no simplification, no general multiplication (only by constants), no division or
modulo by anything but a positive constant — the one case where Python's floor semantics and
Z3's `div`/`mod` agree (style.md §6).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

Term = Any  # an int (IntArith) or a z3 arithmetic term (Z3Arith)
BoolTerm = Any  # a bool (IntArith) or a z3 boolean term (Z3Arith)


class Arith(ABC):
    """Integer arithmetic over some term language. Rules: COLL-7.1"""

    @abstractmethod
    def const(self, value: int) -> Term: ...

    @abstractmethod
    def add(self, lhs: Term, rhs: Term) -> Term: ...

    @abstractmethod
    def sub(self, lhs: Term, rhs: Term) -> Term: ...

    @abstractmethod
    def mul(self, lhs: Term, factor: int) -> Term: ...

    @abstractmethod
    def floordiv(self, lhs: Term, divisor: int) -> Term: ...

    @abstractmethod
    def mod(self, lhs: Term, divisor: int) -> Term: ...

    @abstractmethod
    def eq(self, lhs: Term, rhs: Term) -> BoolTerm: ...

    @abstractmethod
    def lt(self, lhs: Term, rhs: Term) -> BoolTerm: ...

    @abstractmethod
    def le(self, lhs: Term, rhs: Term) -> BoolTerm: ...

    @abstractmethod
    def and_(self, *args: BoolTerm) -> BoolTerm: ...

    @abstractmethod
    def or_(self, *args: BoolTerm) -> BoolTerm: ...

    @abstractmethod
    def not_(self, arg: BoolTerm) -> BoolTerm: ...

    def ne(self, lhs: Term, rhs: Term) -> BoolTerm:
        return self.not_(self.eq(lhs, rhs))

    def ge(self, lhs: Term, rhs: Term) -> BoolTerm:
        return self.le(rhs, lhs)

    def gt(self, lhs: Term, rhs: Term) -> BoolTerm:
        return self.lt(rhs, lhs)

    def in_range(self, value: Term, lo: int, hi: int) -> BoolTerm:
        """lo <= value < hi."""
        return self.and_(self.le(self.const(lo), value), self.lt(value, self.const(hi)))


def check_divisor(divisor: int) -> None:
    """Division and modulo only by positive integer constants (style.md §6)."""
    if not isinstance(divisor, int) or isinstance(divisor, bool) or divisor <= 0:
        raise AssertionError(f"division/modulo by non-positive constant {divisor!r}")


class IntArith(Arith):
    """Python ints and bools: the concrete reading of every collective formula. Rules: COLL-7.1"""

    def const(self, value: int) -> int:
        return value

    def add(self, lhs: int, rhs: int) -> int:
        return lhs + rhs

    def sub(self, lhs: int, rhs: int) -> int:
        return lhs - rhs

    def mul(self, lhs: int, factor: int) -> int:
        return lhs * factor

    def floordiv(self, lhs: int, divisor: int) -> int:
        check_divisor(divisor)
        return lhs // divisor

    def mod(self, lhs: int, divisor: int) -> int:
        check_divisor(divisor)
        return lhs % divisor

    def eq(self, lhs: int, rhs: int) -> bool:
        return lhs == rhs

    def lt(self, lhs: int, rhs: int) -> bool:
        return lhs < rhs

    def le(self, lhs: int, rhs: int) -> bool:
        return lhs <= rhs

    def and_(self, *args: bool) -> bool:
        return all(args)

    def or_(self, *args: bool) -> bool:
        return any(args)

    def not_(self, arg: bool) -> bool:
        return not arg
