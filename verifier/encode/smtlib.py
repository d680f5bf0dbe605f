"""The SMT-LIB2 text of one query: what the solver decides, what the query hash and the proof
cache are keyed on, and what `--smt2`/an independent solver would read.

Kept apart from `solver` so that a cache or a second solver depends on the text alone.
"""

from __future__ import annotations

import hashlib

import z3


def query_text(constraints: list[z3.BoolRef]) -> str:
    """The SMT-LIB2 benchmark of the conjunction of `constraints` (declarations, assertions,
    `(check-sat)`), deterministic for the same constraints and z3 version."""
    return canonical_text(constraints)


def canonical_text(constraints: list[z3.BoolRef]) -> str:
    """The text of the constraints copied into a fresh context first. Z3's printer names shared
    sub-terms after their ids and decides what to share from reference counts, both of which
    depend on everything else built in the caller's context; the copy depends on the formula
    alone, so one query has one text whatever was built before it, in this process or another
    (D2 in specs/verification.md)."""
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    s.add(*[c.translate(ctx) for c in constraints])
    return s.to_smt2()


def text_hash(text: str, solver_name: str) -> str:
    """The short query hash written in certificates: the text bound to the solver that decides it."""
    return hashlib.sha256((solver_name + "\n" + text).encode()).hexdigest()[:16]
