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
    # by first occurrence, per (name, id): two counters may give two names one id
    assert renumber_binders("|i#9@a| |j#3@a| |i#9@b|") == "|i#0@a| |j#1@a| |i#0@b|"
    assert renumber_binders("|task#2@a| |e.slot0#4@a|") == \
        renumber_binders("|task#4@a| |e.slot0#4@a|") == "|task#0@a| |e.slot0#1@a|"
    assert prepare(query(z3.Context(), 6, []), rlimit=1000).digest == \
        prepare(query(z3.Context(), 41, []), rlimit=1000).digest


def test_shared_terms_are_defined_once_and_the_text_parses_back_to_the_query():
    """D2: the text is printed from the term DAG; a closed sub-term met twice is one
    `define-fun`, and the parsed text is the very same terms (z3 hash-conses them)."""
    ctx = z3.Context()
    n, i = z3.Int("n", ctx), z3.Int("i#3@a", ctx)
    shared = z3.And(i >= 0, i < n / 4, n % 8 == 0)
    bound = z3.Int("k#4@w0", ctx)
    query = [shared, z3.Or(shared, n == 12, z3.Xor(n > 2, i <= n)),
             z3.Not(z3.Exists([bound], z3.And(bound > i, bound < n, z3.If(bound > 3, i, n) > 1)))]
    text = query_text(query)
    assert text.count("(define-fun ") == 1 and "(assert $0)" in text
    assert "|i#3@a|" in text and "(exists ((|k#4@w0| Int))" in text
    parsed = z3.parse_smt2_string(text, ctx=ctx)
    assert len(parsed) == len(query) and all(_same(p, q, {}) for p, q in zip(parsed, query))
    assert parsed[0].eq(query[0]) and parsed[1].eq(query[1])  # the very same terms


def _same(parsed: z3.ExprRef, built: z3.ExprRef, seen: dict) -> bool:
    """`parsed` is `built` up to what the text cannot say: the parser names each quantifier
    (`:qid`), and reads a negative numeral `(- 5)` as a negation."""
    key = (parsed.get_id(), built.get_id())
    if key not in seen:
        seen[key] = parsed.eq(built) or _same_parts(parsed, built, seen)
    return seen[key]


def _same_parts(parsed: z3.ExprRef, built: z3.ExprRef, seen: dict) -> bool:
    if z3.is_quantifier(parsed) and z3.is_quantifier(built):
        n = built.num_vars()
        return parsed.is_forall() == built.is_forall() and parsed.num_vars() == n and \
            all(parsed.var_name(k) == built.var_name(k) and
                parsed.var_sort(k).eq(built.var_sort(k)) for k in range(n)) and \
            _same(parsed.body(), built.body(), seen)
    if z3.is_int_value(built):
        return built.as_long() < 0 and parsed.decl().kind() == z3.Z3_OP_UMINUS and \
            parsed.arg(0).eq(z3.IntVal(-built.as_long(), built.ctx))
    if z3.is_var(parsed) and z3.is_var(built):
        return z3.get_var_index(parsed) == z3.get_var_index(built)
    return z3.is_app(parsed) and z3.is_app(built) and parsed.decl().eq(built.decl()) and \
        parsed.num_args() == built.num_args() and \
        all(_same(x, y, seen) for x, y in zip(parsed.children(), built.children()))


def test_terms_outside_the_printed_table_use_z3s_printer():
    """A sort, operator or name the DAG printer does not handle, or a bound name that could
    capture a constant, falls back to z3's structural printer (still one text per query)."""
    from verifier.encode.smtlib import _z3_text

    ctx = z3.Context()
    x, r = z3.Int("x", ctx), z3.Real("r", ctx)
    for query in ([r > 0], [z3.Exists([x], x > 1), x > 3], [x ** 2 > 1]):
        assert query_text(query) == _z3_text(query)
    reserved = z3.Int("and", ctx)  # a name the language reserves is quoted
    assert "(declare-fun |and| () Int)" in query_text([reserved > 0])


def test_every_query_of_a_proof_parses_back_to_its_constraints(monkeypatch):
    """The texts z3 decides, hashes and caches say exactly what the encoder built: parsed into
    the encoder's own context, each assertion is the built term (`_same`)."""
    import verifier.encode.solver as solver
    from conftest import EXAMPLES, load_one
    from verifier.encode import Options, verify_proc
    from verifier.encode.discharge import clear_cache

    caught: list[tuple[list[z3.BoolRef], str]] = []
    printer = solver.canonical_text

    def keep(constraints: list[z3.BoolRef]) -> str:
        text = printer(constraints)
        caught.append((list(constraints), text))
        return text

    monkeypatch.setattr(solver, "canonical_text", keep)
    clear_cache()
    for file, name in (("cp_async_double_buffer", "double_buffer"),
                       ("smem_exchange_bug_nofence", "smem_exchange_bug_nofence")):
        verify_proc(load_one(EXAMPLES / f"{file}.py", name), Options())
    clear_cache()
    assert any("(exists " in text for _, text in caught)  # quantified chains were printed
    for constraints, text in caught:
        parsed = z3.parse_smt2_string(text, ctx=constraints[0].ctx)
        assert len(parsed) == len(constraints)
        assert all(_same(p, c, {}) for p, c in zip(parsed, constraints)), text
