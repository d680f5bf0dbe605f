"""The only place a Z3 solver is created, checked, or read (style.md §2-3).

`unknown` is a verdict, never a crash and never a pass. Every query is bounded by a
deterministic work budget (Z3's resource limit, `rlimit`), seeded, and decided from its
canonical SMT-LIB2 text in a fresh context (`solve`), so that the answer is a function of the
text, the solver version and the budget alone: the same on any machine, under any load, in any
worker process, and from the proof cache (specs/verification.md "Budgets", D1-D5). Wall-clock
time is only an outer safety net; a query stopped by it says so (`stopped_by="wall-clock"`) and
is never cached.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum

import z3

from verifier.collectives.symbolic import fresh_context, interrupt_all, run_check
from verifier.encode.abstraction import linear_abstraction
from verifier.encode.smtlib import canonical_text, renumbered, restore_binders, text_hash


class Status(Enum):
    proved = "proved"  # the negated obligation is unsat
    candidate = "candidate"  # sat: a counterexample to be replayed
    unknown = "unknown"  # budget exhausted, safety net hit, or incomplete theory


SOLVER_NAME = f"z3-{z3.get_version_string()}"

# Budgets in Z3 resource units (calibrated in benchmarks/issue11.py: the most any query of the
# examples and test programs uses is recorded there; each budget leaves a wide margin above it).
DEFAULT_RLIMIT = 60_000_000  # one query (≈ 10-20 s of solver work on a 2020s core)
QUANTIFIED_RLIMIT = 4_000_000  # a quantified refinement level (after its anchored variant)
ABSTRACTION_RLIMIT = 6_000_000  # the linear abstraction: a quick first try, not the verdict
SMALL_MODEL_RLIMIT = 3_000_000  # each bounded re-solve looking for small sizes
DIRECT_RLIMIT = 1_000_000  # the SMT core's own try at a quantifier-free query (D5)
DIRECT_ARITH = 2  # its arithmetic solver: z3's simplex core, ~2x faster there than `lp` (D5)
REUSE_RLIMIT = 6_000_000  # re-solving a candidate at sizes the machine already ran
SMALL_BOUNDS = (4, 16, 64, 256, 1024, 4096)  # sizes tried, smallest first
SMALL_ENOUGH = 16  # a model with every size at most this is replayed as it is
WALL_NET_S = 300.0  # outer safety net per query (reported as such, never cached)


@dataclass(frozen=True)
class Budget:
    """Per-query limits: `rlimit` is the deterministic bound; `wall_s` the safety net."""

    rlimit: int = DEFAULT_RLIMIT
    wall_s: float = WALL_NET_S
    seed: int = 0


@dataclass(frozen=True)
class Query:
    """One satisfiability question as data: what a worker process or the cache needs."""

    text: str  # canonical SMT-LIB2 (smtlib.canonical_text), binder ids renumbered (D2)
    rlimit: int
    seed: int = 0
    exact: bool = True  # False: a product-free abstraction's sat only escalates
    nonlinear: bool = False  # products were built: try the linear abstraction first
    sizes: tuple[str, ...] = ()  # size constants to shrink in a sat model
    binders: tuple[int, ...] = ()  # the caller's binder ids by rank (`own_constants`)

    @property
    def key(self) -> str:
        """What the answer is a function of (the proof cache's key)."""
        head = f"{SOLVER_NAME}|rlimit={self.rlimit}|direct={DIRECT_RLIMIT},{DIRECT_ARITH}|" \
               f"seed={self.seed}|" \
               f"exact={self.exact}|" \
               f"nonlinear={self.nonlinear}|sizes={','.join(self.sizes)}\n"
        return hashlib.sha256((head + self.text).encode()).hexdigest()

    @property
    def published(self) -> str:
        """The text as `--smt2` writes it and `--recheck` reads it: the text solved."""
        return self.text

    @property
    def digest(self) -> str:
        """The short query hash of certificates: the published text bound to the solver."""
        return text_hash(self.published, SOLVER_NAME)

    def own_constants(self, constants: Mapping[str, int]) -> dict[str, int]:
        """A model's constants (named as in the solved text) under the caller's names."""
        return {restore_binders(name, self.binders): v for name, v in constants.items()}


@dataclass(frozen=True)
class Answer:
    """What `solve` found: plain data, picklable and cacheable."""

    status: Status
    reason: str = ""
    constants: Mapping[str, int] = field(default_factory=dict)  # the model (sat only)
    rlimit: int = 0  # resource units used
    stopped_by: str = ""  # "rlimit" | "wall-clock" | "" (a limit stopped the solver)

    @property
    def deterministic(self) -> bool:
        return self.stopped_by != "wall-clock"


@dataclass(frozen=True)
class Outcome:
    status: Status
    model: dict[str, int] | None
    reason: str
    query_hash: str
    rlimit: int = 0
    stopped_by: str = ""
    text: str = field(default="", repr=False, compare=False)  # `Query.published`, when kept


def stop_checks_on_interrupt() -> Callable[[], None]:
    """Leave SIGINT to Python (z3's own handler would swallow it and end the check as
    `unknown`) and return the function that stops every running check (CLI-4)."""
    z3.set_param("ctrl_c", False)
    return interrupt_all


def prepare(constraints: list[z3.BoolRef], rlimit: int, seed: int = 0, exact: bool = True,
            nonlinear: bool = False, sizes: tuple[str, ...] = ()) -> Query:
    """The query of `constraints`, its binder ids renumbered by rank (`smtlib.renumbered`): the
    solver's work depends on the names it parses (a few resource units), and ids come from a
    process-wide counter whose values depend on the order queries were built in (`--jobs`), so
    the text solved and cached is a function of the query alone (D1, D2, D4)."""
    text, binders = renumbered(canonical_text(constraints))
    return Query(text, rlimit, seed, exact, nonlinear, sizes, binders)


class _Run:
    """Checks in one fresh context, accounting the resource units each one uses."""

    def __init__(self, ctx: z3.Context, wall_s: float, seed: int) -> None:
        self.ctx, self.wall_s, self.seed = ctx, wall_s, seed
        self.used = 0
        self.stopped_by = ""

    def check(self, assertions: list[z3.BoolRef], rlimit: int, direct: bool = False
              ) -> tuple[z3.CheckSatResult, z3.Solver]:
        """One check; `direct`: z3's SMT core alone (`SimpleSolver`, with `DIRECT_ARITH`),
        else the default solver, which first runs the preprocessing tactics z3 picks for the
        query's logic."""
        s = z3.SimpleSolver(ctx=self.ctx) if direct else z3.Solver(ctx=self.ctx)
        s.set(rlimit=rlimit, random_seed=self.seed, timeout=max(1, int(self.wall_s * 1000)))
        if direct:
            s.set("arith.solver", DIRECT_ARITH)
        s.add(*assertions)
        t0 = time.perf_counter()
        result = run_check(s)
        spent = _rlimit_count(s) - self.used
        self.used += spent
        if result == z3.unknown:
            if spent >= rlimit:
                self.stopped_by = "rlimit"
            elif time.perf_counter() - t0 >= self.wall_s * 0.95:
                self.stopped_by = "wall-clock"
        return result, s

    def decide(self, assertions: list[z3.BoolRef], rlimit: int, direct_first: bool,
               model_needed: bool) -> tuple[z3.CheckSatResult, z3.Solver]:
        """The check of a query (D5): a quantifier-free one is first given to the SMT core
        alone with `DIRECT_RLIMIT` units; its unsat is the answer, and so is its sat where no
        model is read (a level that only escalates). Anything else is asked again of the
        default solver with the full budget, exactly as without the first try, so every model
        (hence every candidate, replay and refutation) is the one it was."""
        if not direct_first:
            return self.check(assertions, rlimit)
        result, s = self.check(assertions, min(rlimit, DIRECT_RLIMIT), direct=True)
        if result == z3.unsat or (result == z3.sat and not model_needed):
            return result, s
        # the first try's unit limit is not the query's; the safety net stopping it is a
        # dependence on the load (the try might have proved it), said as such unless proved
        net = self.stopped_by == "wall-clock"
        self.stopped_by = ""
        result, s = self.check(assertions, rlimit)
        if net and result != z3.unsat:
            self.stopped_by = "wall-clock"
        return result, s


def _quantified(text: str) -> bool:
    """Whether the canonical text binds a variable (a quantified refinement level); a name
    containing these words only sends a query down the default path, never changes it."""
    return "(forall " in text or "(exists " in text


def _rlimit_count(s: z3.Solver) -> int:
    """The context's cumulative resource counter (each check's limit is relative to it)."""
    stats = s.statistics()
    return int(stats.get_key_value("rlimit count")) if "rlimit count" in stats.keys() else 0


def solve(q: Query, wall_s: float = WALL_NET_S) -> Answer:
    """Decide `q` from its text alone (pure but for the wall-clock safety net). The parsed
    assertions are simplified first (in the fresh context, so still a function of the text):
    an equivalent formula, on which the quantified chain queries cost a fifth less."""
    ctx = fresh_context()
    assertions = [z3.simplify(a) for a in z3.parse_smt2_string(q.text, ctx=ctx)]
    run = _Run(ctx, wall_s, q.seed)
    direct = not _quantified(q.text)
    if q.nonlinear:
        abstract = linear_abstraction(assertions)
        if abstract is not None:
            result, _ = run.decide(abstract, min(q.rlimit, ABSTRACTION_RLIMIT), direct,
                                   model_needed=False)
            if result == z3.unsat:
                return Answer(Status.proved, rlimit=run.used)
            if not q.exact:  # sat or gave up: not a proof here, the next level decides
                return Answer(Status.candidate, f"linear abstraction: {result}",
                              rlimit=run.used)
            run.stopped_by = ""  # the abstraction's limit is not the query's
    result, s = run.decide(assertions, q.rlimit, direct, model_needed=q.exact)
    if result == z3.unsat:
        return Answer(Status.proved, rlimit=run.used)
    if result == z3.unknown:
        reason = _reason(run, s, q.rlimit, wall_s)
        return Answer(Status.unknown, reason, rlimit=run.used, stopped_by=run.stopped_by)
    if not q.exact:  # a level that only escalates: its model is never read
        return Answer(Status.candidate, "", rlimit=run.used)
    model = s.model()
    size_vars = [z3.Int(name, ctx) for name in q.sizes]
    largest = max((_int(model.eval(v, model_completion=True)) for v in size_vars), default=0)
    if largest > SMALL_ENOUGH:
        for bound in [b for b in SMALL_BOUNDS if b < largest]:
            small, s2 = run.check(assertions + [z3.And(v >= 0, v <= bound) for v in size_vars],
                                  SMALL_MODEL_RLIMIT)
            if small == z3.sat:
                model = s2.model()
                break
        if run.stopped_by == "wall-clock":  # the model found depends on the machine's speed
            return Answer(Status.candidate, "", _constants(model), run.used, "wall-clock")
        run.stopped_by = ""  # a bounded try that gave up keeps the larger model (deterministic)
    return Answer(Status.candidate, "", _constants(model), run.used)


def _reason(run: _Run, s: z3.Solver, rlimit: int, wall_s: float) -> str:
    if run.stopped_by == "rlimit":
        return f"resource limit of {rlimit:,} units exhausted (deterministic budget)"
    if run.stopped_by == "wall-clock":
        return f"wall-clock safety net of {wall_s:g} s hit (depends on the machine's load)"
    return s.reason_unknown()


def _constants(model: z3.ModelRef) -> dict[str, int]:
    out = {}
    for d in model.decls():
        if d.arity() == 0 and d.range().kind() == z3.Z3_INT_SORT:
            out[d.name()] = _int(model.get_interp(d))
    return dict(sorted(out.items()))


def _int(v: z3.ExprRef | None) -> int:
    return v.as_long() if v is not None and z3.is_int_value(v) else 0


def evaluate(names: Mapping[str, z3.ArithRef], constants: Mapping[str, int]
             ) -> dict[str, int]:
    """The values of `names` (terms in the caller's context) under a model given by its
    constants; absent constants are 0, as Z3's model completion makes them."""
    out = {}
    for name, term in names.items():
        pairs = [(c, z3.IntVal(constants.get(str(c), 0), term.ctx)) for c in _free_consts(term)]
        value = z3.simplify(z3.substitute(term, *pairs)) if pairs else z3.simplify(term)
        out[name] = _int(value)
    return out


def _free_consts(term: z3.ExprRef) -> list[z3.ExprRef]:
    found: dict[int, z3.ExprRef] = {}
    stack = [term]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            found[e.get_id()] = e
        elif z3.is_app(e):
            stack.extend(e.children())
    return list(found.values())
