"""JUnit XML for CI dashboards: one testsuite per file, one testcase per proc.

proved → pass; no-hazard-at-sizes (a `--sizes` run, exit 0) → pass, saying so in system-out;
refuted → <failure>; rejected or an internal error → <error>; every other verdict (unknown,
unsupported, vacuous, or one added later) → <skipped> with the verdict named, so a dashboard
never counts an unproved proc as passed. Written with junitparser.
"""

from __future__ import annotations

import re

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from verifier.report.text import NOT_A_PROOF, finding_lines, verdict_words
from verifier.results import ProcResult, Verdict
from verifier.user_files import escape_char


# not allowed in XML 1.0 (surrogates: the bytes of a file name that is not UTF-8)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: escape_char(m.group()), text)


def _details(r: ProcResult) -> tuple[str, str]:
    """A one-line message and the full text of the proc's findings."""
    if not r.findings:
        return _xml_text(f"{r.proc}: {r.verdict.value}"), ""
    first = r.findings[0]
    tag = first.code or first.rule or first.kind.value
    message = f"{first.loc}: {tag}: {first.message}"
    return _xml_text(message), _xml_text("\n".join(line for f in r.findings
                                                    for line in finding_lines(f)))


def _testcase(r: ProcResult) -> TestCase:
    case = TestCase(_xml_text(r.proc), classname=_xml_text(r.file), time=round(r.time_s, 3))
    message, text = _details(r)
    if r.load_output:  # what the file printed while loading (specs/loading.md LOAD-8)
        case.system_out = _xml_text(r.load_output)
    if r.verdict is Verdict.no_hazard_at_sizes and not r.internal_error:
        case.system_out = _xml_text(f"{r.proc}: {verdict_words(r, lower=True)} ({NOT_A_PROOF})\n"
                                    + r.load_output)
        return case
    if r.internal_error:
        outcome = Error(f"internal error: {message}", "internal-error")
    elif r.verdict is Verdict.refuted:
        outcome = Failure(message, r.verdict.value)
    elif r.verdict is Verdict.rejected:
        outcome = Error(message, r.verdict.value)
    elif r.verdict is Verdict.proved:
        return case
    else:
        outcome = Skipped(message, r.verdict.value)
    outcome.text = text or None
    case.result = [outcome]
    return case


def to_junit(results: list[ProcResult]) -> str:
    suites: dict[str, TestSuite] = {}
    for r in results:
        suite = suites.setdefault(r.file, TestSuite(_xml_text(r.file)))
        suite.add_testcase(_testcase(r))
    xml = JUnitXml("spork-verify")
    for suite in suites.values():
        suite.update_statistics()
        suite.time = round(sum(case.time or 0.0 for case in suite), 3)
        xml.add_testsuite(suite)
    # totals set by hand: the root `skipped` attribute of update_statistics() is outside the
    # common JUnit XSD (Jenkins xUnit junit-10.xsd)
    xml.tests = sum(s.tests for s in suites.values())
    xml.failures = sum(s.failures for s in suites.values())
    xml.errors = sum(s.errors for s in suites.values())
    xml.time = round(sum(s.time for s in suites.values()), 3)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + xml.tostring().decode() + "\n"
