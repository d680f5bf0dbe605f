"""The SMT-LIB2 text of one query: what the solver decides, what the query hash and the proof
cache are keyed on, and what `--smt2`/an independent solver would read.

Kept apart from `solver` so that a cache or a second solver depends on the text alone.
"""

from __future__ import annotations

import hashlib
import re

import z3


def query_text(constraints: list[z3.BoolRef]) -> str:
    """The SMT-LIB2 benchmark of the conjunction of `constraints` (declarations, assertions,
    `(check-sat)`), deterministic for the same constraints and z3 version."""
    return canonical_text(constraints)


_CONTINUATION = re.compile(r"\n[ \t]+")
_BINDER = re.compile(r"#(\d+)@")  # `blk#5@a`: a loop variable's encoding, named by its Sym id


def canonical_text(constraints: list[z3.BoolRef]) -> str:
    """The text of the constraints as a function of their structure alone, so one query has
    one text whatever was built before it, in this process or another (D2 in
    specs/verification.md).

    Not `Solver.to_smt2()`: that printer let-binds every term whose reference count exceeds
    one, and reference counts depend on which wrappers and caches happen to be alive (also
    after a copy into a fresh context). `Solver.sexpr()` aliases sub-terms by their structure;
    its line breaks depend on the width of the names, so each top-level form is put on one
    line (continuation lines are indented; the names are identifiers: no whitespace inside).
    """
    s = z3.Solver(ctx=constraints[0].ctx) if constraints else z3.Solver()
    s.add(*constraints)
    return _CONTINUATION.sub(" ", s.sexpr().rstrip("\n")) + "\n(check-sat)\n"


def renumber_binders(text: str) -> str:
    """`text` with the binder ids of its variable names (`blk#5@a`) renumbered 0, 1, ... in
    their numeric order. Ids come from a process-wide counter, so they depend on what was loaded
    before the proc; their order within one proc does not. The renaming is a bijection, so the
    text is the same query up to variable names: what query hashes and `--smt2` files hold, so
    that a proof reproduces them in any process (`--check-cert`, CLI-9)."""
    rank = {k: i for i, k in enumerate(sorted({int(m) for m in _BINDER.findall(text)}))}
    return _BINDER.sub(lambda m: f"#{rank[int(m.group(1))]}@", text)


def text_hash(text: str, solver_name: str) -> str:
    """The short query hash written in certificates: the text bound to the solver that decides it."""
    return hashlib.sha256((solver_name + "\n" + text).encode()).hexdigest()[:16]
