"""`--format junit`: the report of every example validates against the Jenkins xUnit plugin's
JUnit XSD (tests/data/junit-10.xsd) and parses back with junitparser into one testsuite per
file and one testcase per proc whose outcome matches the verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
import xmlschema
from conftest import EXAMPLES, ROOT, expectations
from junitparser import Error, Failure, JUnitXml, Skipped
from report_support import recorded

from verifier.cli import main
from verifier.diagnostics import SrcLoc
from verifier.report import to_junit
from verifier.results import Finding, FindingKind, ProcResult, Verdict

XSD = xmlschema.XMLSchema10(ROOT / "tests" / "data" / "junit-10.xsd")
OUTCOME = {"refuted": Failure, "rejected": Error, "unknown": Skipped, "unsupported": Skipped}


def parse(text: str) -> JUnitXml:
    XSD.validate(text)
    return JUnitXml.fromstring(text.encode())


def test_every_example_report_validates_and_matches_verdicts() -> None:
    examples = sorted(EXAMPLES.glob("*.py"))
    results = [r for e in examples for r in recorded(e)]
    xml = parse(to_junit(results))
    suites = list(xml)
    assert [s.name for s in suites] == sorted({r.file for r in results}, key=[r.file for r in
                                                                              results].index)
    by_proc = {case.name: case for s in suites for case in s}
    assert xml.tests == len(results) == len(by_proc)
    for example in examples:
        for exp in expectations(example):
            case = by_proc[exp.proc]
            if exp.verdict == "proved":
                assert case.is_passed
                continue
            (outcome,) = case.result
            assert isinstance(outcome, OUTCOME[exp.verdict])
            if exp.verdict == "refuted":
                assert f":{exp.line}:" in outcome.text and exp.variable in outcome.text
    refuted = sum(1 for e in examples for x in expectations(e) if x.verdict == "refuted")
    assert xml.failures == refuted > 0


def test_cli_junit_rejected_is_an_error(capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    code = main(["--format", "junit", str(bad), str(EXAMPLES / "saxpy.py")])
    xml = parse(capsys.readouterr().out)
    assert code == 2
    assert xml.tests == 2 and xml.errors == 1 and xml.failures == 0
    cases = {case.name: case for s in xml for case in s}
    assert cases["saxpy"].is_passed
    (err,) = next(c for n, c in cases.items() if n != "saxpy").result
    assert isinstance(err, Error) and "ERR-P00" in err.message


def test_other_verdicts_are_skipped_and_control_characters_escaped() -> None:
    loc = SrcLoc("k.py", 1, 1)
    odd = Finding(FindingKind.unsupported, "bad \x1b[31m name\x00", None, loc)
    results = [ProcResult("k.py", "k", Verdict.unsupported, 0.1, findings=(odd,), loc=loc),
               ProcResult("k.py", "k2", Verdict.unknown, 0.2, loc=loc),
               ProcResult("k.py", "k3", Verdict.unknown, 0.0, loc=loc, internal_error=True)]
    xml = parse(to_junit(results))
    (suite,) = xml
    assert (suite.tests, suite.skipped, suite.errors) == (3, 2, 1)
    cases = list(suite)
    assert "\\x1b" in cases[0].result[0].message
    assert cases[1].result[0].message == "k2: unknown"
    assert "internal error" in cases[2].result[0].message


def test_xsd_check_is_not_vacuous() -> None:
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        XSD.validate("<testsuites><testsuite name='x'/></testsuites>")
