"""The SMT-LIB2 text of one query: what the solver decides, what the query hash and the proof
cache are keyed on, and what `--smt2`/an independent solver would read.

Kept apart from `solver` so that a cache or a second solver depends on the text alone.
The text is a function of the constraints' structure alone (D2 in specs/verification.md): it
is printed from the term DAG (`_Nodes`, `_emit`), naming each shared closed sub-term once with a
`define-fun`, never from reference counts or ids.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import z3
from z3 import z3core

_CONTINUATION = re.compile(r"\n[ \t]+")
# `blk#5@a`: a loop variable's encoding, named by its Sym id (the name, then the id)
_BINDER = re.compile(r"([^\s|()#]*)#(\d+)@")
_SIMPLE = re.compile(r"[A-Za-z~!@$%^&*_+=<>.?/-][0-9A-Za-z~!@$%^&*_+=<>.?/-]*\Z")
_RESERVED = frozenset({
    "!", "_", "as", "assert", "check-sat", "declare-fun", "define-fun", "exists", "forall",
    "let", "match", "par", "true", "false", "and", "or", "not", "xor", "ite", "distinct",
    "div", "mod", "rem", "abs", "Int", "Bool", "BINARY", "DECIMAL", "HEXADECIMAL", "NUMERAL",
    "STRING"})
# Z3 operators printed, with their SMT-LIB name; any other makes the query use `_z3_text`.
_OPS = {z3.Z3_OP_EQ: "=", z3.Z3_OP_DISTINCT: "distinct", z3.Z3_OP_ITE: "ite",
        z3.Z3_OP_AND: "and", z3.Z3_OP_OR: "or", z3.Z3_OP_XOR: "xor", z3.Z3_OP_NOT: "not",
        z3.Z3_OP_IMPLIES: "=>", z3.Z3_OP_LE: "<=", z3.Z3_OP_GE: ">=", z3.Z3_OP_LT: "<",
        z3.Z3_OP_GT: ">", z3.Z3_OP_ADD: "+", z3.Z3_OP_SUB: "-", z3.Z3_OP_UMINUS: "-",
        z3.Z3_OP_MUL: "*", z3.Z3_OP_IDIV: "div", z3.Z3_OP_MOD: "mod", z3.Z3_OP_REM: "rem"}
_SORTS = {z3.Z3_BOOL_SORT: "Bool", z3.Z3_INT_SORT: "Int"}
_LEAF, _CONST, _APP, _VAR, _QUANT = range(5)  # numeral or true/false; free constant; ...


class _Unprintable(Exception):
    """A term outside what `_emit` prints: the query is printed by `_z3_text` instead."""


def query_text(constraints: list[z3.BoolRef]) -> str:
    """The SMT-LIB2 benchmark of the conjunction of `constraints` (declarations, definitions,
    assertions, `(check-sat)`), deterministic for the same constraints and z3 version."""
    return canonical_text(constraints)


def canonical_text(constraints: list[z3.BoolRef]) -> str:
    """The text of the constraints as a function of their structure alone, so one query has
    one text whatever was built before it, in this process or another (D2 in
    specs/verification.md).

    Printed from the term DAG: every free constant declared in the order it is first met
    (depth first, arguments left to right, assertions in order), every compound sub-term
    without bound variables that occurs twice or more in the query defined once
    (`(define-fun $k () Sort ...)`, numbered in the same order), the rest written inline.
    Terms are hash-consed by z3, so the DAG is the structure; reference counts, ids and what
    else the context holds never show. A term kind outside the table below falls back to
    `_z3_text`, also structural, only slower.
    """
    if not constraints:
        return _z3_text(constraints)
    nodes = _Nodes.of(constraints[0].ctx)
    try:
        roots = [nodes.learn(c) for c in constraints]
        return _emit(nodes, roots)
    except _Unprintable:
        return _z3_text(constraints)


def _z3_text(constraints: list[z3.BoolRef]) -> str:
    """Z3's structural printer (`Solver.sexpr()`, which aliases sub-terms by structure; not
    `to_smt2()`, which let-binds by reference counts), each top-level form on one line."""
    s = z3.Solver(ctx=constraints[0].ctx) if constraints else z3.Solver()
    s.add(*constraints)
    return _CONTINUATION.sub(" ", s.sexpr().rstrip("\n")) + "\n(check-sat)\n"


@dataclass(frozen=True, slots=True)
class _Node:
    """One term of the DAG: its kind, printed head (operator, symbol or numeral; a variable's
    de Bruijn index; a quantifier's binder list), children ids, sort, and `depth`: one more
    than the largest de Bruijn index free in it (0: closed, may be named)."""

    kind: int
    head: str
    args: tuple[int, ...]
    sort: str
    depth: int
    names: tuple[str, ...] = ()  # a quantifier's bound names


class _Nodes:
    """The terms of one z3 context met so far, by id. The terms whose ids key the table are
    kept alive, so an id is never reused for another term while the table exists."""

    def __init__(self, ctx: z3.Context) -> None:
        self.ctx = ctx
        self.ref = ctx.ref()
        self.table: dict[int, _Node] = {}
        self.keep: list[z3.ExprRef] = []

    @staticmethod
    def of(ctx: z3.Context) -> "_Nodes":
        nodes = getattr(ctx, "_spork_nodes", None)
        if nodes is None:
            nodes = _Nodes(ctx)
            ctx._spork_nodes = nodes  # type: ignore[attr-defined]
        return nodes

    def learn(self, root: z3.ExprRef) -> int:
        """The id of `root`, every term under it entered in the table."""
        ident = root.get_id()
        if ident not in self.table:
            self.keep.append(root)
            self._learn(root.as_ast())
        return ident

    def _learn(self, ast: object) -> None:
        c, table = self.ref, self.table
        # (term, id, None) on the way down; (term, id, (app, argument ids)) once its
        # arguments are in the table, so their ids are read from z3 once per term
        stack: list[tuple[object, int, object]] = [(ast, z3core.Z3_get_ast_id(c, ast), None)]
        while stack:
            a, ident, ready = stack.pop()
            if ident in table:
                continue
            if ready is not None:
                app, ids = ready  # type: ignore[misc]
                op = _OPS.get(z3core.Z3_get_decl_kind(c, z3core.Z3_get_app_decl(c, app)))
                if op is None:
                    raise _Unprintable("operator")
                table[ident] = _Node(_APP, op, ids, self._sort(a),
                                     max(table[i].depth for i in ids))
                continue
            kind = z3core.Z3_get_ast_kind(c, a)
            if kind == z3.Z3_QUANTIFIER_AST:
                body = z3core.Z3_get_quantifier_body(c, a)
                body_id = z3core.Z3_get_ast_id(c, body)
                if body_id not in table:
                    stack.append((a, ident, None))  # visited again once its body is in
                    stack.append((body, body_id, None))
                    continue
                table[ident] = self._quantifier(a, body_id)
            elif kind == z3.Z3_APP_AST:
                app = z3core.Z3_to_app(c, a)
                n = z3core.Z3_get_app_num_args(c, app)
                if n == 0:
                    table[ident] = self._constant(a, app)
                    continue
                args = [z3core.Z3_get_app_arg(c, app, k) for k in range(n)]
                ids = tuple(z3core.Z3_get_ast_id(c, x) for x in args)
                stack.append((a, ident, (app, ids)))
                stack.extend((x, i, None) for x, i in zip(reversed(args), reversed(ids)))
            elif kind == z3.Z3_NUMERAL_AST:
                text = z3core.Z3_get_numeral_string(c, a)
                if self._sort(a) != "Int":
                    raise _Unprintable("numeral sort")
                table[ident] = _Node(_LEAF, f"(- {text[1:]})" if text.startswith("-")
                                     else text, (), "Int", 0)
            elif kind == z3.Z3_VAR_AST:
                index = z3core.Z3_get_index_value(c, a)
                table[ident] = _Node(_VAR, str(index), (), self._sort(a), index + 1)
            else:
                raise _Unprintable("ast kind")

    def _sort(self, a: object) -> str:
        sort = _SORTS.get(z3core.Z3_get_sort_kind(self.ref, z3core.Z3_get_sort(self.ref, a)))
        if sort is None:
            raise _Unprintable("sort")
        return sort

    def _constant(self, a: object, app: object) -> _Node:
        c = self.ref
        decl = z3core.Z3_get_app_decl(c, app)
        kind = z3core.Z3_get_decl_kind(c, decl)
        if kind == z3.Z3_OP_TRUE:
            return _Node(_LEAF, "true", (), "Bool", 0)
        if kind == z3.Z3_OP_FALSE:
            return _Node(_LEAF, "false", (), "Bool", 0)
        if kind != z3.Z3_OP_UNINTERPRETED:
            raise _Unprintable("constant")
        return _Node(_CONST, self._symbol(z3core.Z3_get_decl_name(c, decl)), (),
                     self._sort(a), 0)

    def _symbol(self, sym: object) -> str:
        if z3core.Z3_get_symbol_kind(self.ref, sym) != z3.Z3_STRING_SYMBOL:
            raise _Unprintable("symbol")
        name = z3core.Z3_get_symbol_string(self.ref, sym)
        if not name or name[0] == "$" or "|" in name or "\\" in name:
            raise _Unprintable("symbol text")  # `$k` names definitions
        return name if _SIMPLE.match(name) and name not in _RESERVED else f"|{name}|"

    def _quantifier(self, a: object, body: int) -> _Node:
        c = self.ref
        if z3core.Z3_get_quantifier_num_patterns(c, a) or \
                z3core.Z3_get_quantifier_num_no_patterns(c, a) or \
                z3core.Z3_get_quantifier_weight(c, a) != 1 or z3core.Z3_is_lambda(c, a):
            raise _Unprintable("quantifier attributes")
        n = z3core.Z3_get_quantifier_num_bound(c, a)
        names = tuple(self._symbol(z3core.Z3_get_quantifier_bound_name(c, a, k))
                      for k in range(n))
        if len(set(names)) != n:
            raise _Unprintable("repeated bound name")
        sorts = []
        for k in range(n):
            kind = z3core.Z3_get_sort_kind(c, z3core.Z3_get_quantifier_bound_sort(c, a, k))
            if kind not in _SORTS:
                raise _Unprintable("bound sort")
            sorts.append(_SORTS[kind])
        head = "forall" if z3core.Z3_is_quantifier_forall(c, a) else "exists"
        binders = " ".join(f"({name} {sort})" for name, sort in zip(names, sorts))
        return _Node(_QUANT, f"{head} ({binders})", (body,), "Bool",
                     max(0, self.table[body].depth - n), names)


def _emit(nodes: _Nodes, roots: list[int]) -> str:
    """The query's text from the table (see `canonical_text`)."""
    table = nodes.table
    refs: dict[int, int] = {}
    for r in roots:
        refs[r] = refs.get(r, 0) + 1
    stack = list(roots)
    seen: set[int] = set()
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        for child in table[i].args:
            refs[child] = refs.get(child, 0) + 1
            stack.append(child)

    decls: list[str] = []
    defs: list[str] = []
    closed: dict[int, str] = {}  # text (inline or a definition's name) of closed terms
    frames: list[tuple[tuple[str, ...], dict[int, str]]] = []  # quantifiers around the cursor
    bound: set[str] = set()

    def text(i: int) -> str | None:
        if table[i].depth == 0:
            return closed.get(i)
        return frames[-1][1].get(i) if frames else None

    def store(i: int, s: str) -> None:
        node = table[i]
        if node.depth:
            frames[-1][1][i] = s
        elif node.kind in (_APP, _QUANT) and refs[i] > 1:
            name = f"${len(defs)}"
            defs.append(f"(define-fun {name} () {node.sort} {s})")
            closed[i] = name
        else:
            closed[i] = s

    todo: list[tuple[int, int]] = [(0, r) for r in reversed(roots)]  # (step, id)
    while todo:
        step, i = todo.pop()
        node = table[i]
        if step == 0:  # visit
            if text(i) is not None:
                continue
            if node.kind == _QUANT:
                todo += [(3, i), (0, node.args[0]), (2, i)]
            else:
                todo.append((1, i))
                todo += [(0, child) for child in reversed(node.args)]
        elif step == 1:  # every argument printed: print the term
            if text(i) is not None:
                continue
            if node.kind == _VAR:
                s = _bound_name(frames, int(node.head))
            elif node.args:
                s = f"({node.head} {' '.join(text(child) for child in node.args)})"  # type: ignore[misc]
            else:
                s = node.head
                if node.kind == _CONST:  # met once per query: its declaration
                    decls.append(f"(declare-fun {s} () {node.sort})")
            store(i, s)
        elif step == 2:  # enter a quantifier's body
            if any(name in names for name in node.names for names, _ in frames):
                raise _Unprintable("a bound name shadows another")
            bound.update(node.names)
            frames.append((node.names, {}))
        else:  # leave it
            body = text(node.args[0])
            frames.pop()
            store(i, f"({node.head} {body})")
    names = [d.split(" ", 2)[1] for d in decls]
    if len(set(names)) != len(names) or bound.intersection(names):
        # two constants of one name, or a bound name that could capture a constant
        raise _Unprintable("name clash")
    asserts = [f"(assert {closed[r]})" for r in roots]
    return "\n".join(decls + defs + asserts) + "\n(check-sat)\n"


def _bound_name(frames: list[tuple[tuple[str, ...], dict[int, str]]], index: int) -> str:
    """The name de Bruijn index `index` refers to (the innermost binder list first; within a
    list, index 0 is its last name)."""
    for names, _ in reversed(frames):
        if index < len(names):
            return names[len(names) - 1 - index]
        index -= len(names)
    raise _Unprintable("free variable")


def renumber_binders(text: str) -> str:
    """`text` with the binder ids of its variable names (`blk#5@a`) renumbered 0, 1, ... in the
    order the names first occur. Ids come from process-wide counters (more than one: two
    binders of different names may share an id), so they depend on what was loaded and built
    before the query, in which order (`--jobs`); the order of first occurrence is the canonical
    text's, a function of the query's structure. The renaming is a bijection on the
    (name, id) pairs, so the text is the same query up to variable names: what is solved,
    cached and published (query hashes, `--smt2` files), so that a proof reproduces them, and
    uses the same resource units, in any process (`--check-cert`, CLI-9; D1, D2, D4)."""
    return renumbered(text)[0]


def renumbered(text: str) -> tuple[str, tuple[int, ...]]:
    """`renumber_binders(text)` and the original ids by new id (new id k was `ids[k]`)."""
    parts = _BINDER.split(text)  # text, name, id, text, name, id, ..., text: one pass
    new: dict[tuple[str, str], int] = {}
    for i in range(1, len(parts), 3):
        k = new.setdefault((parts[i], parts[i + 1]), len(new))
        parts[i + 1] = f"#{k}@"
    return "".join(parts), tuple(int(k) for _, k in new)


def restore_binders(name: str, ids: tuple[int, ...]) -> str:
    """A name of a renumbered text under its original binder ids (`renumbered`'s inverse)."""
    return _BINDER.sub(lambda m: f"{m.group(1)}#{ids[int(m.group(2))]}@", name)


def text_hash(text: str, solver_name: str) -> str:
    """The short query hash written in certificates: the text bound to the solver that decides it."""
    return hashlib.sha256((solver_name + "\n" + text).encode()).hexdigest()[:16]
