"""Collective index expressions (COLL-4.1, 4.2): how generated code computes coordinates.

An `IndexExpr` is a base (`threadIdx.x`, `blockIdx.x`, or an int constant) followed by
subtractions, floor divisions and modulos by positive constants, with a tracked value range.
It reads only ints; it produces C text (`to_c`), concrete values (`evaluate`) and terms over an
`Arith` (`to_term`). Non-goals: no other operators, no symbolic constants.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.collectives.arith import Arith, Term, check_divisor
from verifier.diagnostics import InternalError

THREAD_IDX = "threadIdx.x"
BLOCK_IDX = "blockIdx.x"

Op = tuple[str, int]  # ("-", c) | ("/", c) | ("%", c)


@dataclass(frozen=True, slots=True)
class IndexExpr:
    """base, then ops applied left to right; `lo`/`hi` bound the value ([lo, hi), None = unknown).

    Rules: COLL-4.1, COLL-4.2
    """

    base: str | int
    ops: tuple[Op, ...] = ()
    lo: int | None = None
    hi: int | None = None

    # ------------------------------------------------------------ constructors

    @staticmethod
    def thread_idx(block_dim: int) -> "IndexExpr":
        """`threadIdx.x`, range [0, blockDim). Rules: COLL-4.1"""
        return IndexExpr(THREAD_IDX, (), 0, block_dim)

    @staticmethod
    def cta_rank(cluster_dim: int) -> "IndexExpr":
        """`blockIdx.x % clusterDim`: the CTA's rank in its cluster. Rules: COLL-1.1, COLL-4.1"""
        return IndexExpr(BLOCK_IDX).mod(cluster_dim)

    @staticmethod
    def constant(value: int) -> "IndexExpr":
        return IndexExpr(value, (), value, value + 1)

    @property
    def is_constant(self) -> bool:
        return isinstance(self.base, int)

    # ------------------------------------------------------------ normalising operations

    def sub(self, value: int) -> "IndexExpr":
        """e - c; subtracting 0 is a no-op and consecutive subtractions add. Rules: COLL-4.2"""
        if isinstance(self.base, int):
            return IndexExpr.constant(self.base - value)
        if value == 0:
            return self
        if self.ops and self.ops[-1][0] == "-":
            ops = self.ops[:-1] + (("-", self.ops[-1][1] + value),)
        else:
            ops = self.ops + (("-", value),)
        lo = None if self.lo is None else self.lo - value
        hi = None if self.hi is None else self.hi - value
        return IndexExpr(self.base, ops, lo, hi)

    def div(self, value: int) -> "IndexExpr":
        """floor(e / c); dividing by 1 is a no-op and consecutive divisions multiply.

        Rules: COLL-4.2
        """
        check_divisor(value)
        if isinstance(self.base, int):
            return IndexExpr.constant(self.base // value)
        if value == 1:
            return self
        if self.ops and self.ops[-1][0] == "/":
            ops = self.ops[:-1] + (("/", self.ops[-1][1] * value),)
        else:
            ops = self.ops + (("/", value),)
        lo = None if self.lo is None else self.lo // value
        hi = None if self.hi is None else -(-self.hi // value)
        return IndexExpr(self.base, ops, lo, hi)

    def mod(self, value: int) -> "IndexExpr":
        """e mod c with the normalisation of COLL-4.2.

        mod 1 is the constant 0; a mod whose operand range already lies in [0, c) is dropped;
        trailing (mod u) / (- u) with c | u are deleted before appending (mod c).
        Rules: COLL-4.2
        """
        check_divisor(value)
        if isinstance(self.base, int):
            return IndexExpr.constant(self.base % value)
        if value == 1:
            return IndexExpr.constant(0)
        if self.lo is not None and self.hi is not None and self.lo >= 0 and self.hi <= value:
            return self
        ops = self.ops
        while ops and ops[-1][0] in ("%", "-") and ops[-1][1] % value == 0:
            ops = ops[:-1]
        return IndexExpr(self.base, ops + (("%", value),), 0, value)

    # ------------------------------------------------------------ readings

    def evaluate(self, x: int, r: int) -> int:
        """Value for threadIdx.x = x in the CTA of cluster rank r (floor semantics).

        `blockIdx.x` is read as r: every expression on it starts with `% clusterDim` or a
        modulo dividing it, so any blockIdx.x congruent to r gives the same value.
        Rules: COLL-4.1, COLL-7.3
        """
        if isinstance(self.base, int):
            return self.base
        value = x if self.base == THREAD_IDX else r
        for op, c in self.ops:
            if op == "-":
                value -= c
            elif op == "/":
                value //= c
            elif op == "%":
                value %= c
            else:
                raise InternalError(f"unknown index op {op!r}")
        return value

    def evaluate_all(self, xs: list[int], rs: list[int]) -> list[int]:
        """`evaluate` over parallel lists of (x, r); used to compute thread sets quickly."""
        if isinstance(self.base, int):
            return [self.base] * len(xs)
        values = list(xs) if self.base == THREAD_IDX else list(rs)
        for op, c in self.ops:
            if op == "-":
                values = [v - c for v in values]
            elif op == "/":
                values = [v // c for v in values]
            else:
                values = [v % c for v in values]
        return values

    def operands_nonnegative_all(self, xs: list[int], rs: list[int]) -> list[bool]:
        """Per (x, r) of the parallel lists: True iff every operand of a `/` or `%` is >= 0
        (then C's truncating division equals floor division, COLL-7.3)."""
        if isinstance(self.base, int):
            return [True] * len(xs)
        values = list(xs) if self.base == THREAD_IDX else list(rs)
        fine = [True] * len(values)
        for op, c in self.ops:
            if op == "-":
                values = [v - c for v in values]
                continue
            fine = [f and v >= 0 for f, v in zip(fine, values)]
            values = [v // c for v in values] if op == "/" else [v % c for v in values]
        return fine

    def to_term(self, x: Term, r: Term, arith: Arith) -> Term:
        """The expression as a term over `arith`: threadIdx.x -> x, blockIdx.x -> r.

        Rules: COLL-7.3
        """
        if isinstance(self.base, int):
            return arith.const(self.base)
        term = x if self.base == THREAD_IDX else r
        for op, c in self.ops:
            if op == "-":
                term = arith.sub(term, arith.const(c))
            elif op == "/":
                term = arith.floordiv(term, c)
            else:
                term = arith.mod(term, c)
        return term

    def to_c(self) -> str:
        """C text, parenthesised left to right (COLL-4.2).

        An operation following a subtraction parenthesises what precedes it; the whole text is
        wrapped in parentheses iff it contains a subtraction (so `threadIdx.x / 16`,
        `blockIdx.x % 8 / 2`, `(threadIdx.x % 128 - 64)`, `((threadIdx.x - 256) / 128)`).
        Rules: COLL-4.2
        """
        if isinstance(self.base, int):
            return str(self.base)
        text = self.base
        after_sub = False
        for op, c in self.ops:
            if after_sub:
                text = f"({text})"
            text = f"{text} {op} {c}"
            after_sub = op == "-"
        if any(op == "-" for op, _ in self.ops):
            text = f"({text})"
        return text

    def __str__(self) -> str:
        return self.to_c()
