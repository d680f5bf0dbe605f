"""The SMT-LIB2 text of one query: what the solver is given, what the query hash and the proof
cache are keyed on, and what `--smt2`/an independent solver would read.

Kept apart from `solver` so that a cache or a second solver depends on the text alone.
"""

from __future__ import annotations

import hashlib

import z3


def query_text(constraints: list[z3.BoolRef]) -> str:
    """The SMT-LIB2 benchmark of the conjunction of `constraints` (declarations, assertions,
    `(check-sat)`), deterministic for the same constraints and z3 version."""
    s = z3.Solver(ctx=constraints[0].ctx) if constraints else z3.Solver()
    s.add(*constraints)
    return s.to_smt2()


def text_hash(text: str, solver_name: str) -> str:
    """The short query hash written in certificates: the text bound to the solver that decides it."""
    return hashlib.sha256((solver_name + "\n" + text).encode()).hexdigest()[:16]
