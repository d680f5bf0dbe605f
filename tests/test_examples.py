"""Every bundled kernel gets the verdict its `# expect:` header states, with the right finding
kind, variable and source line of the later access; every refutation is replayed. The default
run checks one proved kernel per folder, every rejection, and one seeded bug per folder and
finding kind (`conftest.representatives`); .ci/run checks all."""

from __future__ import annotations

import pytest

from verifier.encode import verify_proc
from verifier.diagnostics import SporkError
from verifier.load.load import load_procs
from verifier.results import Verdict

from conftest import case_params, Expectation, expectations, kernel_files, load_one

CASES = [e for f in kernel_files() for e in expectations(f)]


# the default run proves one kernel per folder and refutes one seeded bug per folder and finding
# kind; .ci/run all of them (the proofs also run in the chain and codegen tests)
@pytest.mark.parametrize("exp", case_params(CASES, sample=("refuted", "proved")))
def test_expected_verdict(exp: Expectation) -> None:
    if exp.verdict in ("rejected", "unsupported"):
        try:
            procs = {p.name: p for p in load_procs(exp.file)}
        except SporkError as e:  # @proc raises at decoration time (specs/loading.md LOAD-3)
            assert e.proc == exp.proc, e.render()
            assert exp.kind is None or e.code == exp.kind, e.render()
            assert (type(e).__name__ == "Unsupported") == (exp.verdict == "unsupported"), e
            return
        p = procs[exp.proc]
        result = verify_proc(p)
        assert result.verdict is Verdict(exp.verdict), result
        if exp.kind:
            assert result.findings[0].code == exp.kind, result.findings[0]
        return
    result = verify_proc(load_one(exp.file, exp.proc))
    assert result.verdict.value == exp.verdict, [f.message for f in result.findings]
    if exp.verdict == "proved":
        assert result.certificate is not None
        assert not result.findings
        return
    if exp.verdict == "vacuous":  # never a proof: no certificate, a located reason
        assert result.certificate is None and not result.obligations
        (finding,) = result.findings
        assert exp.kind is None or finding.code == exp.kind, finding
        assert exp.line is None or finding.loc.line == exp.line, finding
        return
    if exp.verdict == "refuted":
        confirmed = [f for f in result.findings
                     if f.counterexample is not None and f.counterexample.replayed]
        assert confirmed, "a refutation needs a replayed counterexample"
        first = min(confirmed, key=lambda f: (f.loc.line, f.loc.col))
        matching = [f for f in confirmed if f.kind.value == exp.kind and
                    (exp.variable is None or f.variable == exp.variable) and
                    (exp.line is None or f.loc.line == exp.line)]
        assert matching, (f"expected {exp.kind} on {exp.variable} at line {exp.line}; got "
                          f"{[(f.kind.value, f.variable, f.loc.line) for f in confirmed]}")
        del first
