"""Symbolic forwarding: an output element's final value as families of updates (CHAIN-6).

The final value of output element e is its last assignment's value plus every reduction after
it (CHAIN-3.2). A read of any buffer is replaced the same way by the last assignment before it
(proposed by isl, `dataflow`, and checked by Z3) plus the reductions between; a read with no
assignment before it is the initial value of an argument, or `uninit` for an allocation. The
result is a list of `Family`s: each is a set of instances (the reductions chosen along the way,
`prim`, plus the writers they read, `defd`, which those determine) under one condition, all
adding the same term shape over input elements (`atoms`). The value of e is the sum over every
family of every instance's term: reassociation of that sum is the one liberty taken (CHAIN-6.3).

A product or quotient needs each operand to be one term per instance (`exclusive`): a product
of a sum would need distributivity, which floating point lacks, and is unsupported (CHAIN-6.4).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from verifier.chain.dataflow import LastWriter, Sink, end_sink, last_writer
from verifier.chain.erase import ChainUnsupported
from verifier.chain.presburger import (
    TRUE, Aff, Formula, conj, disj, eq, lex_lt, neg, subst)
from verifier.chain.program import Access, Program, Stmt, Value, VBin, VConst, VNeg, VRead


@dataclass(frozen=True, slots=True)
class TConst:
    value: float


@dataclass(frozen=True, slots=True)
class TAtom:
    """The initial value of an argument element (`uninit`: an allocation never assigned)."""

    buf: str
    index: tuple[Aff, ...]
    uninit: bool = False


@dataclass(frozen=True, slots=True)
class TBin:
    op: str
    lhs: "Term"
    rhs: "Term"


@dataclass(frozen=True, slots=True)
class TNeg:
    arg: "Term"


Term = TConst | TAtom | TBin | TNeg


def signature(t: Term) -> str:
    """The term's shape with atoms named by buffer only; commutative operands sorted."""
    match t:
        case TConst(value=v):
            return repr(v)
        case TAtom(buf=b, uninit=u):
            return f"{'uninit ' if u else ''}{b}[..]"
        case TNeg(arg=a):
            return f"-({signature(a)})"
        case TBin(op=op, lhs=l, rhs=r):
            a, b = signature(l), signature(r)
            if op in "*+" and b < a:
                a, b = b, a
            return f"({a} {op} {b})"
    raise TypeError(t)


def atoms(t: Term) -> list[TAtom]:
    """Atoms in the order `signature` lists them."""
    match t:
        case TConst():
            return []
        case TAtom():
            return [t]
        case TNeg(arg=a):
            return atoms(a)
        case TBin(op=op, lhs=l, rhs=r):
            first, second = (r, l) if op in "*+" and signature(r) < signature(l) else (l, r)
            return atoms(first) + atoms(second)
    raise TypeError(t)


def term_text(t: Term, names: dict[str, str], show: "callable[[Aff], str]") -> str:
    match t:
        case TConst(value=v):
            return repr(v)
        case TAtom(buf=b, index=idx, uninit=u):
            text = f"{names.get(b, b)}[{', '.join(show(i) for i in idx)}]"
            return f"uninitialized {text}" if u else text
        case TNeg(arg=a):
            return f"-{term_text(a, names, show)}"
        case TBin(op=op, lhs=l, rhs=r):
            return f"{term_text(l, names, show)} {op} {term_text(r, names, show)}"
    raise TypeError(t)


@dataclass(frozen=True)
class Step:
    """One statement instance on a family's chain (for messages and replays)."""

    stmt: Stmt
    values: tuple[Aff, ...]  # its iterators, over the family's variables
    role: str  # "update" (a reduction chosen freely) or "writer" (a last writer)


@dataclass(frozen=True)
class Def:
    """Variables `names` defined by `rel` (one last writer): where `region` holds there is
    exactly one solution (Z3 proved the last writer unique and total there, CHAIN-3.3)."""

    names: tuple[str, ...]
    region: Formula
    rel: Formula
    values: tuple[Aff, ...] | None = None  # the solution, when one form holds in the region


@dataclass(frozen=True)
class Family:
    """Instances: values of `prim` (and of e0, e1, ... and the sizes) with `defs` solved and
    `rest` true; each adds `term`."""

    prim: tuple[str, ...]
    defs: tuple[Def, ...]
    rest: Formula
    term: Term
    steps: tuple[Step, ...] = field(default=())

    def defd(self) -> tuple[str, ...]:
        return tuple(n for d in self.defs for n in d.names)

    def cond(self) -> Formula:
        return conj([*(d.rel for d in self.defs), self.rest])

    def renamed(self, env: dict[str, Aff], names: dict[str, str]) -> "Family":
        """Substitute `env` everywhere; `names` renames the family's own variables."""
        full = {**env, **{a: Aff.var(b) for a, b in names.items()}}
        return Family(tuple(names.get(v, v) for v in self.prim),
                      tuple(Def(tuple(names.get(n, n) for n in d.names), subst(d.region, full),
                                subst(d.rel, full), None if d.values is None else
                                tuple(v.subst(full) for v in d.values)) for d in self.defs),
                      subst(self.rest, full), _subst_term(self.term, full),
                      tuple(Step(st.stmt, tuple(a.subst(full) for a in st.values), st.role)
                            for st in self.steps))

    def eliminated(self) -> "Family":
        """The same family with every def that has one form substituted away (its region
        kept as a condition): fewer variables for isl and Z3."""
        env: dict[str, Aff] = {}
        kept: list[Def] = []
        regions: list[Formula] = []
        for d in self.defs:
            if d.values is not None:
                regions.append(subst(d.region, env))
                for n, v in zip(d.names, d.values):
                    env[n] = v.subst(env)
            else:
                kept.append(Def(d.names, subst(d.region, env), subst(d.rel, env)))
        return Family(self.prim, tuple(kept), conj([*regions, subst(self.rest, env)]),
                      _subst_term(self.term, env),
                      tuple(Step(st.stmt, tuple(a.subst(env) for a in st.values), st.role)
                            for st in self.steps))

    def not_exists(self, extra: Formula) -> list[Formula]:
        """Quantifier-free formulas over the free variables (and `defd`, read as fresh
        existentials) whose disjunction says: no solution of the defs has `rest` and `extra`
        true. Exact because each def has exactly one solution in its region (CHAIN-3.3)."""
        out: list[Formula] = []
        done: list[Formula] = []
        for d in self.defs:
            out.append(conj([*done, neg(d.region)]))
            done.append(d.rel)
        out += [conj([*done, neg(self.rest)]), conj([*done, neg(extra)])]
        return out


def _subst_term(t: "Term", env: dict[str, Aff]) -> "Term":
    match t:
        case TAtom(buf=b, index=idx, uninit=u):
            return TAtom(b, tuple(a.subst(env) for a in idx), u)
        case TNeg(arg=a):
            return TNeg(_subst_term(a, env))
        case TBin(op=op, lhs=l, rhs=r):
            return TBin(op, _subst_term(l, env), _subst_term(r, env))
    return t


@dataclass(frozen=True)
class Sum:
    families: tuple[Family, ...]
    exclusive: bool  # exactly one family, with no free update, holds for each instance


class Forwarder:
    """Builds the families of one program; variables are tagged `prefix<n>_` to stay apart."""

    def __init__(self, prog: Program, prefix: str,
                 settle: Callable[[Sink], LastWriter] | None = None) -> None:
        self.prog = prog
        self.settle = settle or (lambda sink: last_writer(prog, sink))
        self.prefix = prefix
        self.counter = itertools.count()
        self.cache: dict[tuple[int, Access] | str, LastWriter] = {}
        self.lastwriters: list[LastWriter] = []
        self.active: list[int] = []

    def lastwriter(self, key: tuple[int, Access] | str, sink: Sink) -> LastWriter:
        if key not in self.cache:
            self.cache[key] = self.settle(sink)
            self.lastwriters.append(self.cache[key])
        return self.cache[key]

    def fresh(self, s: Stmt) -> dict[str, Aff]:
        tag = f"{self.prefix}{next(self.counter)}_"
        return {v: Aff.var(tag + v) for v in s.iters}

    def output(self, buf: str) -> Sum:
        """The families of output `buf`'s final value at element (e0, e1, ...)."""
        sink = end_sink(self.prog, buf)
        env = {v: Aff.var(v) for v in sink.iters}
        total = self.read(sink, self.lastwriter(buf, sink), env)
        kept = tuple(f.eliminated() for f in total.families if not _is_zero(f.term))
        return Sum(kept, total.exclusive)

    def read(self, sink: Sink, lw: LastWriter, env: dict[str, Aff]) -> Sum:
        at_sched = tuple(a.subst(env) for a in sink.sched)
        at_idx = tuple(a.subst(env) for a in sink.access.index)
        families: list[Family] = []
        exclusive = True
        by_writer: dict[int, list] = {}
        for pc in lw.pieces:
            by_writer.setdefault(pc.writer.id, []).append(pc)
        for group in by_writer.values():
            w = group[0].writer
            wenv = self.fresh(w)
            wdef = Def(tuple(_name(wenv[v]) for v in w.iters),
                       disj(subst(pc.cond, env) for pc in group),
                       disj(conj([subst(pc.cond, env),
                                  *(eq(wenv[v], val.subst(env))
                                    for v, val in zip(w.iters, pc.values))]) for pc in group),
                       tuple(v.subst(env) for v in group[0].values) if len(group) == 1
                       else None)
            wsched = tuple(a.subst(wenv) for a in w.sched)
            base = self.rhs(w, wenv)
            exclusive &= base.exclusive
            step = Step(w, tuple(wenv[v] for v in w.iters), "writer")
            for f in base.families:
                families.append(Family(f.prim, (wdef,) + f.defs, f.rest, f.term,
                                       (step,) + f.steps))
            updates = self.reductions(sink.access.buf, at_idx, wsched, at_sched, TRUE)
            exclusive &= not updates
            families += [Family(f.prim, (wdef,) + f.defs, f.rest, f.term, f.steps)
                         for f in updates]
        none = subst(lw.none, env)
        if none != disj([]):
            buf = self.prog.buffers[sink.access.buf]
            families.append(Family((), (), none, TAtom(buf.key, at_idx[len(buf.prefix):],
                                                       not buf.is_arg)))
            updates = self.reductions(sink.access.buf, at_idx, None, at_sched, none)
            exclusive &= not updates
            families += updates
        return Sum(tuple(families), exclusive)

    def reductions(self, buf: str, idx: tuple[Aff, ...], after: tuple[Aff, ...] | None,
                   before: tuple[Aff, ...], cond: Formula) -> list[Family]:
        out = []
        for u in self.prog.writers(buf, reduce=True):
            uenv = self.fresh(u)
            usched = tuple(a.subst(uenv) for a in u.sched)
            here = conj([subst(u.domain, uenv),
                         *(eq(a.subst(uenv), b) for a, b in zip(u.write.index, idx)),
                         lex_lt(usched, before),
                         lex_lt(after, usched) if after is not None else TRUE, cond])
            names = tuple(_name(uenv[v]) for v in u.iters)
            step = Step(u, tuple(uenv[v] for v in u.iters), "update")
            for f in self.rhs(u, uenv).families:
                out.append(Family(names + f.prim, f.defs, conj([here, f.rest]), f.term,
                                  (step,) + f.steps))
        return out  # type: ignore[return-value]

    def rhs(self, s: Stmt, env: dict[str, Aff]) -> Sum:
        if s.id in self.active:
            raise ChainUnsupported("a value that depends on an earlier instance of the same "
                                   "statement (a recurrence)", s.loc, "CHAIN-6.4")
        self.active.append(s.id)
        try:
            return self.value(s.rhs, s, env)
        finally:
            self.active.pop()

    def value(self, v: Value, s: Stmt, env: dict[str, Aff]) -> Sum:
        match v:
            case VConst(value=c):
                return Sum((Family((), (), TRUE, TConst(c)),), True)
            case VRead(access=acc):
                sink = Sink(f"read of {acc.buf} at line {acc.loc.line}", s.iters, s.domain,
                            s.sched, acc)
                return self.read(sink, self.lastwriter((s.id, acc), sink), env)
            case VNeg(arg=a):
                inner = self.value(a, s, env)
                return Sum(tuple(_map_term(f, TNeg(f.term)) for f in inner.families),
                           inner.exclusive)
            case VBin(op="+" | "-", lhs=l, rhs=r):
                left, right = self.value(l, s, env), self.value(r, s, env)
                rights = right.families if v.op == "+" else tuple(
                    _map_term(f, TNeg(f.term)) for f in right.families)
                return Sum(left.families + rights, False)
            case VBin(op=op, lhs=l, rhs=r):
                left, right = self.value(l, s, env), self.value(r, s, env)
                if not (left.exclusive and right.exclusive):
                    raise ChainUnsupported(f"`{op}` of a sum of updates (distributing it would "
                                           "reassociate more than a reduction)", s.loc,
                                           "CHAIN-6.4")
                return Sum(tuple(Family(a.prim + b.prim, a.defs + b.defs,
                                        conj([a.rest, b.rest]), TBin(op, a.term, b.term),
                                        a.steps + b.steps)
                                 for a in left.families for b in right.families), True)
        raise TypeError(v)


def _map_term(f: Family, t: Term) -> Family:
    return Family(f.prim, f.defs, f.rest, t, f.steps)


def _name(a: Aff) -> str:
    (key, _), = a.coeffs
    assert isinstance(key, str)
    return key


def _is_zero(t: Term) -> bool:
    match t:
        case TConst(value=v):
            return v == 0
        case TNeg(arg=a):
            return _is_zero(a)
        case TBin(op="*", lhs=l, rhs=r):
            return _is_zero(l) or _is_zero(r)
    return False
