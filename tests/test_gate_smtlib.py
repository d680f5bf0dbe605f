"""The SMT-LIB2 text of a query (verifier.encode.smtlib): deterministic, the text the query hash
is taken of, and a faithful copy of the query (re-parsed, it is decided the same way)."""

import z3

from verifier.encode.smtlib import query_text, text_hash
from verifier.encode.solver import SOLVER_NAME, prepare


def _query(ctx: z3.Context, bound: int) -> list[z3.BoolRef]:
    n, i = z3.Ints("n i", ctx)
    # an out-of-bounds question for `for i in seq(0, n): x[i]` with x of size n
    return [n >= 1, i >= 0, i < n, i >= bound]


def _decide(text: str) -> z3.CheckSatResult:
    s = z3.Solver()
    s.from_string(text)
    return s.check()


def test_text_is_deterministic_and_hashed():
    a, b = query_text(_query(z3.Context(), 0)), query_text(_query(z3.Context(), 0))
    assert a == b and "(check-sat)" in a and "declare-fun n" in a
    other = z3.Context()
    z3.Ints("m j", other)  # terms built before the query do not change its text (D2)
    assert prepare(_query(other, 0), rlimit=1000, seed=7).digest == text_hash(a, SOLVER_NAME)
    assert text_hash(a, SOLVER_NAME) != text_hash(query_text(_query(z3.Context(), 1)), SOLVER_NAME)
    assert text_hash(a, SOLVER_NAME) != text_hash(a, "z3-0.0.0")  # bound to the solver version


def test_text_is_decided_like_the_query():
    sat_text = query_text(_query(z3.Context(), 0))  # i = 0 < n: an access exists
    n, i = z3.Ints("n i")
    unsat_text = query_text([n >= 1, i >= 0, i < n, i >= n])  # i >= n: no out-of-bounds index
    assert _decide(sat_text) == z3.sat
    assert _decide(unsat_text) == z3.unsat


def test_text_does_not_depend_on_live_references_or_binder_ids():
    """z3 let-binds terms by reference count, and binder ids depend on what was loaded before:
    neither may change the text a query hash is taken of (--check-cert re-runs the proof)."""
    from verifier.encode.smtlib import renumber_binders

    def query(ctx: z3.Context, sym_id: int, keep: list) -> list[z3.BoolRef]:
        n, t = z3.Int("n", ctx), z3.Int(f"t#{sym_id}@a", ctx)
        shared = t * 4 + n
        keep.append(shared)  # a live Python reference raises the term's reference count
        return [n >= 1, t >= 0, t < n, shared >= 4 * n]

    held: list = []
    a = renumber_binders(query_text(query(z3.Context(), 6, [])))
    b = renumber_binders(query_text(query(z3.Context(), 41, held)))
    assert a == b and "|t#0@a|" in a
    assert renumber_binders("|i#9@a| |j#3@a| |i#9@b|") == "|i#1@a| |j#0@a| |i#1@b|"
    assert prepare(query(z3.Context(), 6, []), rlimit=1000).digest == \
        prepare(query(z3.Context(), 41, []), rlimit=1000).digest
