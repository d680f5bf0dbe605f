"""The chain proof for all sizes: kernel (erased) ≡ reference (CHAIN-7).

Reads the erased kernel and the reference as programs (`program`), settles every last writer
the forwarding needs (isl proposes, Z3 checks: `dataflow`, `invert`), builds each output's
families of updates on both sides (`terms`) and discharges the bijection obligations
(`matching`) with Z3. The answer is `proved`, a `Candidate` counterexample (sizes, element and
the update that is missing, duplicated or different, still to be replayed), `unknown` (a
timeout, or an isl proposal Z3 did not confirm) or `unsupported` (outside CHAIN-2, with why).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from verifier.chain.dataflow import LastWriter, Sink, last_writer, obligations
from verifier.chain.erase import ChainUnsupported
from verifier.chain.invert import tidy
from verifier.chain.isl_bridge import IslGap
from verifier.chain.matching import MatchGap, Query, queries
from verifier.chain.presburger import Aff, Formula, conj, eq, evaluate, neg
from verifier.chain.program import Program, flatten
from verifier.chain.smt import Answer, check
from verifier.chain.terms import Family, Forwarder, TAtom, atoms, term_text
from verifier.lang.ir import ir


@dataclass(frozen=True)
class Update:
    """One statement instance at concrete values: where, which iterators, what it adds."""

    line: int
    file: str
    iterators: dict[str, int]
    term: str


@dataclass(frozen=True)
class Candidate:
    kind: str  # different | duplicated | missing
    sizes: dict[str, int]
    output: str
    element: tuple[int, ...]
    kernel: tuple[Update, ...]
    reference: tuple[Update, ...]
    obligation: str


@dataclass
class Proof:
    status: str  # proved | candidate | unknown | unsupported | vacuous
    reason: str = ""
    obligations: list[tuple[str, str, str, float]] = field(default_factory=list)
    candidate: Candidate | None = None
    testable: bool = True  # False: the arguments differ, so running both means nothing


class _Undecided(Exception):
    pass


def _compatible(k: Program, r: Program, kproc: ir.Proc, rproc: ir.Proc,
                context: Formula, timeout_s: float) -> None:
    """Arguments match by name: the same sizes and tensors, tensor shapes equal under the
    asserts (CHAIN-9.3)."""
    ktensors = {a.name.name: a for a in kproc.args if isinstance(a.typ, ir.Tensor)}
    rtensors = {a.name.name: a for a in rproc.args if isinstance(a.typ, ir.Tensor)}
    if set(ktensors) != set(rtensors):
        raise ChainUnsupported(
            f"the tensor arguments differ: kernel {sorted(ktensors)}, reference "
            f"{sorted(rtensors)} (arguments are matched by name)", kproc.loc, "CHAIN-9.3")
    for name in sorted(set(r.params) - set(k.params)):
        raise ChainUnsupported(f"the reference's size {name} is not a kernel argument",
                               kproc.loc, "CHAIN-9.3")
    for name, kb in sorted((n, k.buffers[n]) for n in ktensors):
        rb = r.buffers[name]
        if len(kb.shape) != len(rb.shape):
            raise ChainUnsupported(f"{name} has rank {len(kb.shape)} in the kernel and "
                                   f"{len(rb.shape)} in the reference", kproc.loc, "CHAIN-9.3")
        differ = conj([context, neg(conj(eq(a, b) for a, b in zip(kb.shape, rb.shape)))])
        if check(differ, timeout_s).answer is not Answer.unsat:
            raise ChainUnsupported(f"the shape of {name} differs between the kernel and the "
                                   "reference for some sizes", kproc.loc, "CHAIN-9.3")


class _Prover:
    def __init__(self, context: Formula, timeout_s: float) -> None:
        self.context = context
        self.timeout_s = timeout_s
        self.proof = Proof("proved")

    def discharge(self, ob_id: str, kind: str, parts: list[Formula] | tuple[Formula, ...],
                  sizes: tuple[str, ...] = ()) -> dict[str, int] | None:
        """Every part unsatisfiable: None; a model of a part otherwise (_Undecided when the
        solver gives up)."""
        start = time.perf_counter()
        for f in parts:
            out = check(conj([self.context, f]), self.timeout_s, sizes)
            if out.answer is Answer.sat:
                self.proof.obligations.append((ob_id, kind, "refuted",
                                               time.perf_counter() - start))
                return out.model
            if out.answer is Answer.unknown:
                self.proof.obligations.append((ob_id, kind, "unknown",
                                               time.perf_counter() - start))
                raise _Undecided(f"{ob_id}: the solver gave up ({out.reason})")
        self.proof.obligations.append((ob_id, kind, "proved", time.perf_counter() - start))
        return None

    def settle(self, prog: Program, side: str, sink: Sink) -> LastWriter:
        """The last writers of `sink`: the tidy proposal if Z3 confirms it, else isl's own
        pieces if Z3 confirms those; else undecided. Rules: CHAIN-3.3"""
        start = time.perf_counter()
        try:
            raw = last_writer(prog, sink)
        except IslGap as e:
            raise _Undecided(f"isl's last writer of {sink.label} is unreadable: {e}") from None
        for lw in (tidy(prog, raw), raw):
            if lw is None:
                continue
            obs = obligations(prog, lw)
            if all(check(conj([self.context, f]), self.timeout_s).answer is Answer.unsat
                   for _, f in obs):
                self.proof.obligations.append((f"{side}/last-writer/{sink.label}",
                                               "last-writer", "proved",
                                               time.perf_counter() - start))
                return lw
        self.proof.obligations.append((f"{side}/last-writer/{sink.label}", "last-writer",
                                       "unknown", time.perf_counter() - start))
        raise _Undecided(f"Z3 did not confirm isl's last writer of {sink.label}")


def prove(kernel: ir.Proc, erased: ir.Proc, reference: ir.Proc, timeout_s: float) -> Proof:
    """The chain proof of `erased` (the kernel's sequential reading) against `reference`.
    Rules: CHAIN-7.1, CHAIN-7.2, CHAIN-7.3"""
    try:
        kprog, rprog = flatten(erased), flatten(reference)
    except ChainUnsupported as e:
        return Proof("unsupported", f"{e.loc}: {e.message}")
    context = conj([kprog.context, rprog.context])
    prover = _Prover(context, timeout_s)
    try:
        if prover.discharge("sizes/satisfiable", "vacuity", [neg(neg(context))]) is None:
            return Proof("vacuous", "the asserts of the kernel and the reference together "
                         "admit no sizes", prover.proof.obligations)
        prover.proof.obligations.clear()
        try:
            _compatible(kprog, rprog, kernel, reference, context, timeout_s)
        except ChainUnsupported as e:
            return Proof("unsupported", f"{e.loc}: {e.message}", testable=False)
        sizes = tuple(sorted(set(kprog.params) | set(rprog.params)))
        fk = Forwarder(kprog, "k", lambda s: prover.settle(kprog, "kernel", s))
        fr = Forwarder(rprog, "r", lambda s: prover.settle(rprog, "reference", s))
        for out in sorted(set(kprog.outputs()) | set(rprog.outputs())):
            kf, rf = fk.output(out).families, fr.output(out).families
            rank = len(kprog.buffers[out].shape)
            for q in queries(list(kf), list(rf), rank, sizes, context):
                model = prover.discharge(f"{out}/{q.id}", q.kind, q.parts, sizes)
                if model is not None:
                    prover.proof.status = "candidate"
                    prover.proof.candidate = _candidate(q, model, out, rank, kprog, sizes)
                    return prover.proof
    except ChainUnsupported as e:
        return Proof("unsupported", f"{e.loc}: {e.message}", prover.proof.obligations)
    except (_Undecided, MatchGap) as e:
        return Proof("unknown", str(e), prover.proof.obligations)
    return prover.proof


_KIND = {"map": "different", "unmatched-kernel": "different", "injective": "duplicated",
         "surjective": "missing", "unmatched-reference": "missing"}


def _updates(f: Family, model: dict[str, int], names: dict[str, str]) -> tuple[Update, ...]:
    """The instance that adds the family's term (its innermost reduction, else the last
    writer), at the model's values; variables the query left free read as 0."""
    def value(a: Aff) -> int:
        return evaluate(a, _completed(model, a))

    term = term_text(f.term, names, lambda a: str(value(a)))
    steps = [st for st in f.steps if st.role == "update"] or list(f.steps[:1])
    if not steps:
        return (Update(0, "", {}, term),)
    st = steps[0]
    iters = {n: value(v) for n, v in zip(st.stmt.iter_names, st.values)}
    return (Update(st.stmt.loc.line, st.stmt.loc.file, iters, term),)


def _completed(model: dict[str, int], a: Aff) -> dict[str, int]:
    return {**{v: 0 for v in a.vars()}, **model}


def _candidate(q: Query, model: dict[str, int], out: str, rank: int, prog: Program,
               sizes: tuple[str, ...]) -> Candidate:
    names = {k: b.name for k, b in prog.buffers.items()}
    element = tuple(model.get(f"e{i}", 0) for i in range(rank))
    return Candidate(_KIND[q.kind], {s: model[s] for s in sizes if s in model}, out, element,
                     tuple(u for f in q.kernel for u in _updates(f, model, names)),
                     tuple(u for f in q.reference for u in _updates(f, model, names)),
                     q.text)


__all__ = ["Candidate", "Proof", "Update", "prove", "TAtom", "atoms"]
