"""Last writers: which assignment instance a read sees in the sequential order (CHAIN-3).

For a read (a `Sink`: the instances of one read access, or the end of the proc reading an
output element), isl proposes the lexicographically last assignment instance that writes the
same element before it, as pieces `condition -> writer statement, writer iterators`, plus the
condition under which no assignment precedes the read. Reductions do not end a value: a read
sees its last assignment plus every reduction between (CHAIN-3.2). `obligations` states what Z3
must prove so that the proposal is believed (CHAIN-3.3).
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from verifier.chain.isl_bridge import map_of, pieces, set_formula, set_of, tuple_text
from verifier.chain.presburger import (
    Aff, Formula, conj, disj, eq, le, lex_lt, lt, neg, subst)
from verifier.chain.program import Access, Program, Stmt


@dataclass(frozen=True)
class Sink:
    """The instances of one read: iterators, domain, schedule and the element read."""

    label: str
    iters: tuple[str, ...]
    domain: Formula
    sched: tuple[Aff, ...]
    access: Access


@dataclass(frozen=True)
class Piece:
    cond: Formula  # over the sink's iterators and the sizes
    writer: Stmt
    values: tuple[Aff, ...]  # the writer's iterators, as functions of the sink's


@dataclass(frozen=True)
class LastWriter:
    sink: Sink
    pieces: tuple[Piece, ...]
    none: Formula  # where no assignment precedes the read


def renamed(s: Stmt, tag: str) -> dict[str, Aff]:
    return {v: Aff.var(f"{tag}{v}") for v in s.iters}


def writes_before(prog: Program, w: Stmt, env: dict[str, Aff], sink: Sink,
                  before: tuple[Aff, ...] | None = None) -> Formula:
    """Instance `env` of writer `w` exists, writes the sink's element and precedes it (and
    follows `before`, when given)."""
    sched = tuple(a.subst(env) for a in w.sched)
    parts = [subst(w.domain, env), *(eq(a.subst(env), b) for a, b in
                                     zip(w.write.index, sink.access.index, strict=True)),
             lex_lt(sched, sink.sched)]
    if before is not None:
        parts.append(lex_lt(before, sched))
    return conj(parts)


def end_sink(prog: Program, buf: str) -> Sink:
    b = prog.buffers[buf]
    names = tuple(f"e{i}" for i in range(len(b.shape)))
    dom = conj(conj([le(0, Aff.var(n)), lt(Aff.var(n), d)]) for n, d in zip(names, b.shape))
    return Sink(f"the final value of {b.name}", names, dom, prog.end_sched(),
                Access(buf, tuple(Aff.var(n) for n in names), prog.loc))


def last_writer(prog: Program, sink: Sink) -> LastWriter:
    """isl's proposal for the last assignment before each instance of `sink`. Rules: CHAIN-3.1"""
    writers = prog.writers(sink.access.buf, reduce=False)
    dom = conj([sink.domain, prog.context])
    if not writers:
        return LastWriter(sink, (), sink.domain)
    disjuncts = []
    src = tuple_text("R", sink.iters)
    for w in writers:
        env = renamed(w, f"w{w.id}_")
        dst = tuple_text("", [a.subst(env) for a in w.sched] + [Aff.num(w.id)])
        disjuncts.append((src, dst, conj([dom, writes_before(prog, w, env, sink)])))
    rel = map_of(prog.params, disjuncts).lexmax()
    out = []
    by_id = {w.id: w for w in writers}
    for cond, vals in pieces(isl.PwMultiAff.from_map(rel), sink.iters):
        w = by_id[vals[-1].const] if vals[-1].is_const() and vals[-1].const in by_id else None
        if w is None:
            raise ValueError("writer id not constant")
        at = {v: next(i for i, a in enumerate(w.sched) if a == Aff.var(v)) for v in w.iters}
        out.append(Piece(cond, w, tuple(vals[at[v]] for v in w.iters)))
    rest = set_of(prog.params, "R", sink.iters, dom).subtract(rel.domain())
    return LastWriter(sink, tuple(out), set_formula(rest, sink.iters))


def obligations(prog: Program, lw: LastWriter) -> list[tuple[str, Formula]]:
    """Formulas that must be unsatisfiable (under the context) for `lw` to be the last writer:
    each piece's writer exists, writes the element, precedes the read, and no assignment lies
    between; where none is claimed, no assignment precedes; the pieces cover the domain.
    Rules: CHAIN-3.3"""
    sink = lw.sink
    out: list[tuple[str, Formula]] = []
    others = prog.writers(sink.access.buf, reduce=False)
    covered = []
    for k, pc in enumerate(lw.pieces):
        env = dict(zip(pc.writer.iters, pc.values))
        here = conj([sink.domain, pc.cond])
        covered.append(pc.cond)
        claimed = writes_before(prog, pc.writer, env, sink)
        out.append((f"piece {k}: the claimed writer (line {pc.writer.loc.line}) writes the "
                    "element before the read", conj([here, neg(claimed)])))
        sched = tuple(a.subst(env) for a in pc.writer.sched)
        for o in others:
            oenv = renamed(o, f"o{o.id}_")
            out.append((f"piece {k}: no assignment at line {o.loc.line} lies between",
                        conj([here, writes_before(prog, o, oenv, sink, sched)])))
    for o in others:
        oenv = renamed(o, f"o{o.id}_")
        out.append((f"no assignment at line {o.loc.line} precedes where none is claimed",
                    conj([sink.domain, lw.none, writes_before(prog, o, oenv, sink)])))
    out.append(("the pieces cover every read", conj([sink.domain,
                                                    neg(disj([*covered, lw.none]))])))
    return out

