"""The chain of equivalence for one kernel (CHAIN-9): erase, prove, replay, else test.

`check_chain` reads a parsed kernel and a reference named `FILE.py:PROC`, and produces a
`ChainResult` (and, when the two differ, a `Finding` located at the kernel update or proc):
  proved      Z3 discharged every obligation of `prove` (all sizes);
  refuted     a candidate counterexample whose element differs when both procs run (`run`);
  tested      the proof did not apply, and both procs agreed on random inputs at sizes Z3
              drew from the asserts: labelled as tested, never as proved;
  unknown / unsupported / vacuous otherwise, with the reason.
A reference exo-lang cannot read is RejectedInput (the user named it wrongly).
"""

from __future__ import annotations

import time
from pathlib import Path

from verifier.chain import exo_bridge
from verifier.chain.erase import ChainUnsupported, erase
from verifier.chain.exo_bridge import ErasedRejected, ExoFailure
from verifier.chain.exo_text import ERASED_NAME, module_source
from verifier.chain.presburger import conj
from verifier.chain.program import flatten
from verifier.chain.prove import Candidate, Proof, Update, prove
from verifier.chain.run import TOLERANCE, Difference, asserts, replay, sample_sizes, test_equal
from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.results import (
    ChainResult, ChainStatus, Counterexample, Finding, FindingKind, ObligationResult,
    ObligationStatus, Related)

TEST_SIZE_COUNT = 3
_RULE = {"proved": "CHAIN-7.1", "candidate": "CHAIN-7.4", "unknown": "CHAIN-7.3",
         "unsupported": "CHAIN-1.5", "vacuous": "CHAIN-9.2"}
_OB_RULE = {"map": "CHAIN-7.1", "injective": "CHAIN-7.1", "surjective": "CHAIN-7.1",
            "unmatched-kernel": "CHAIN-7.1", "unmatched-reference": "CHAIN-7.1",
            "last-writer": "CHAIN-3.3", "vacuity": "CHAIN-9.2"}


def _obligations(proof: Proof) -> tuple[ObligationResult, ...]:
    return tuple(ObligationResult(f"chain/{ob_id}", _OB_RULE.get(kind, "CHAIN-7.1"), kind,
                                  ObligationStatus(status), t)
                 for ob_id, kind, status, t in proof.obligations)


def _reassociates(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Whether equal multisets of terms may still be summed in another order: a `+=`
    reduction, or a sum of three or more terms in one expression (CHAIN-6.3)."""
    def nested_sum(e: ir.Expr, inside: bool) -> bool:
        if isinstance(e, ir.BinOp) and e.op in ("+", "-"):
            return inside or nested_sum(e.lhs, True) or nested_sum(e.rhs, True)
        if isinstance(e, ir.BinOp):
            return nested_sum(e.lhs, False) or nested_sum(e.rhs, False)
        if isinstance(e, ir.USub):
            return nested_sum(e.arg, inside)
        return False

    for s in stmts:
        if isinstance(s, ir.Reduce) or (isinstance(s, ir.Assign) and nested_sum(s.rhs, False)):
            return True
        if _reassociates(tuple(getattr(s, "body", ())) + tuple(getattr(s, "orelse", ()))):
            return True
    return False


def _where(spec: str, base: Path | None) -> tuple[str, str]:
    path_text, _, name = spec.rpartition(":")
    path = Path(path_text)
    if base is not None and not path.is_absolute():
        path = base / path
    return str(path), name


def _update_text(u: Update) -> str:
    if not u.line:
        return f"{u.term} (the initial value)"
    its = ", ".join(f"{k}={v}" for k, v in u.iterators.items())
    return f"{u.term} (line {u.line}{', ' + its if its else ''})"


def _mismatch(c: Candidate, diff: Difference) -> str:
    el = f"{c.output}[{', '.join(map(str, c.element))}]"
    sizes = ", ".join(f"{k}={v}" for k, v in sorted(c.sizes.items()))
    if c.kind == "missing":
        what = "the reference's update " + "; ".join(map(_update_text, c.reference)) + \
            " is missing from the kernel"
    elif c.kind == "duplicated":
        what = "the kernel adds the reference's update " + _update_text(c.kernel[0]) + \
            " more than once" + (f" (again at {', '.join(f'{k}={v}' for k, v in c.kernel[1].iterators.items())})"
                                 if len(c.kernel) > 1 else "")
    else:
        what = "the kernel's update " + "; ".join(map(_update_text, c.kernel)) + \
            " matches no update of the reference"
    return (f"{el} at {sizes}: {what}; replayed: kernel {diff.kernel_value:g}, reference "
            f"{diff.reference_value:g}")


def _candidate_finding(kernel: ir.Proc, c: Candidate, diff: Difference) -> Finding:
    first = c.kernel[0] if c.kernel else None
    loc = SrcLoc(first.file, first.line, 1) if first and first.line else kernel.loc
    related = tuple(Related(SrcLoc(u.file, u.line, 1), "reference update")
                    for u in c.reference if u.line)
    iterators = dict(first.iterators) if first else \
        dict(c.reference[0].iterators) if c.reference else {}
    return Finding(FindingKind.chain, _mismatch(c, diff), c.output, loc, related,
                   Counterexample(dict(c.sizes), iterators, [], list(c.element), True),
                   rule="CHAIN-7.4")


def _tested_finding(kernel: ir.Proc, diff: Difference) -> Finding:
    el = f"{diff.output}[{', '.join(map(str, diff.element))}]"
    sizes = ", ".join(f"{k}={v}" for k, v in sorted(diff.sizes.items()))
    return Finding(FindingKind.chain,
                   f"{el} at {sizes} differs when both procs run on the same inputs: kernel "
                   f"{diff.kernel_value:g}, reference {diff.reference_value:g} (found by "
                   "testing; the proof did not apply)", diff.output, kernel.loc, (),
                   Counterexample(dict(diff.sizes), {}, [], list(diff.element), True),
                   rule="CHAIN-8.4")


def check_chain(kernel: ir.Proc, spec: str, base: Path | None, timeout_s: float,
                ) -> tuple[ChainResult, Finding | None]:
    """The chain result of `kernel` against reference `spec` (FILE.py:PROC, FILE relative to
    `base`). Rules: CHAIN-9.1, CHAIN-9.2"""
    start = time.perf_counter()
    ref_path, ref_name = _where(spec, base)

    def done(status: ChainStatus, message: str, proof: Proof | None = None,
             finding: Finding | None = None, **kw: object) -> tuple[ChainResult, Finding | None]:
        obs = _obligations(proof) if proof is not None else ()
        return ChainResult(spec, status, message, obligations=obs,
                           time_s=time.perf_counter() - start, **kw), finding  # type: ignore[arg-type]

    try:
        erased = erase(kernel)
        text = module_source(erased, ERASED_NAME)
    except ChainUnsupported as e:
        exo_bridge.load_reference(spec, base)  # a wrong reference is still the user's error
        return done(ChainStatus.unsupported, f"the kernel cannot be erased: {e.loc}: {e.message}")
    try:
        reference = exo_bridge.load_reference(spec, base, (text, ERASED_NAME))
    except ErasedRejected as e:
        return done(ChainStatus.unsupported, e.message)
    proof = prove(kernel, erased, reference, timeout_s)
    if proof.status == "proved":
        reassociated = _reassociates(erased.body) or _reassociates(reference.body)
        return done(ChainStatus.proved, "every output element receives the same updates "
                    "computing the same expressions as in the reference, for all sizes "
                    "satisfying the asserts" + ("; sums (+= reductions) may be added in another "
                                                "order (reassociation)" if reassociated else ""),
                    proof, reassociated=reassociated)
    if proof.status == "vacuous":
        return done(ChainStatus.vacuous, proof.reason, proof)
    if proof.status == "candidate" and proof.candidate is not None:
        c = proof.candidate
        try:
            diff = replay(erased, ref_path, ref_name, c.sizes, c.output, c.element)
        except ExoFailure as e:
            return done(ChainStatus.unknown, f"the counterexample at {c.sizes} could not be "
                        f"replayed: {e.message}", proof)
        if diff is None:
            return done(ChainStatus.unknown, f"the counterexample {c.output}{list(c.element)} "
                        f"at {c.sizes} did not replay (spurious?)", proof)
        return done(ChainStatus.refuted, "the kernel computes a different result",
                    proof, _candidate_finding(kernel, c, diff))
    return _fallback(kernel, erased, reference, ref_path, ref_name, proof, timeout_s, done)


def _fallback(kernel: ir.Proc, erased: ir.Proc, reference: ir.Proc, ref_path: str,
              ref_name: str, proof: Proof, timeout_s: float, done) -> tuple[ChainResult,
                                                                           Finding | None]:
    """The proof did not apply: run both at sizes drawn from the asserts. Rules: CHAIN-8.4"""
    why = f"not proved ({proof.status}: {proof.reason})"
    if not proof.testable:
        return done(ChainStatus.unsupported, why, proof)
    names = tuple(a.name.name for a in kernel.args if isinstance(a.typ, ir.Control))
    try:
        context = conj([asserts(erased), asserts(reference)])
        sizes = sample_sizes(context, names, TEST_SIZE_COUNT, timeout_s)
    except ChainUnsupported as e:
        return done(ChainStatus(proof.status if proof.status == "unknown" else "unsupported"),
                    f"{why}; no sizes to test ({e.message})", proof)
    if not sizes:
        return done(ChainStatus.unknown, f"{why}; Z3 found no sizes to test", proof)
    outputs = [o for o in flatten_outputs(reference)]
    try:
        diff = test_equal(erased, ref_path, ref_name, sizes, outputs)
    except ExoFailure as e:
        status = ChainStatus.unknown if proof.status == "unknown" else ChainStatus.unsupported
        return done(status, f"{why}; exo-lang could not run both procs: {e.message}", proof)
    if diff is not None:
        return done(ChainStatus.refuted, "the kernel computes a different result (found by "
                    "testing)", proof, _tested_finding(kernel, diff))
    return done(ChainStatus.tested, f"{why}; equal outputs at every tested size ({TOLERANCE})", proof, tested_sizes=tuple(sizes))


def flatten_outputs(p: ir.Proc) -> list[str]:
    """Tensor arguments the reference writes (compared by the fallback)."""
    try:
        return flatten(p).outputs()
    except ChainUnsupported:
        return [a.name.name for a in p.args if isinstance(a.typ, ir.Tensor)]
