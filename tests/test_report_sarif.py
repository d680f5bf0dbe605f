"""`--format sarif`: every refuted example's report validates against the official SARIF 2.1.0
schema (tests/data), each race is a result with a codeFlow of two threadFlows located at the
two accesses, and rule ids come from the error catalogue."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import EXAMPLES, ROOT, expectations
from report_support import examples_with, recorded

from verifier.cli import main
from verifier.diagnostics import SrcLoc
from verifier.report import to_sarif
from verifier.report.catalog import catalog
from verifier.results import ProcResult, Verdict

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
RACES = {"RAW", "WAR", "WAW"}


def validate(doc: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(doc)


def region(loc: dict) -> tuple[str, int]:
    phys = loc["physicalLocation"]
    return phys["artifactLocation"]["uri"], phys["region"]["startLine"]


@pytest.mark.parametrize("example", examples_with("refuted"), ids=lambda p: p.stem)
def test_refuted_example_sarif_validates_with_race_code_flows(example: Path) -> None:
    results = recorded(example)
    assert any(r.verdict is Verdict.refuted for r in results), "recorded report not refuted"
    doc = json.loads(to_sarif(results))
    validate(doc)
    run = doc["runs"][0]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert set(catalog()) <= set(rule_ids)
    exp = next(e for e in expectations(example) if e.verdict == "refuted")
    findings = [f for r in results for f in r.findings]
    assert len(run["results"]) == len(findings) > 0
    for res, f in zip(run["results"], findings):
        assert rule_ids[res["ruleIndex"]] == res["ruleId"] == f.code
        assert res["level"] == "error"
        assert region(res["locations"][0]) == (f.loc.file, f.loc.line)
        if f.kind.value in RACES:
            (flow,) = res["codeFlows"]
            earlier, later = flow["threadFlows"]
            assert (earlier["id"], later["id"]) == ("earlier", "later")
            early_loc = next(r.loc for r in f.related if r.role == "earlier access")
            assert region(earlier["locations"][0]["location"]) == (early_loc.file,
                                                                   early_loc.line)
            assert region(later["locations"][0]["location"]) == (f.loc.file, f.loc.line)
            assert "thread" in earlier["message"]["text"]
        else:
            assert "codeFlows" not in res
    assert any(res["properties"].get("kind") == exp.kind and
               res["locations"][0]["physicalLocation"]["region"]["startLine"] == exp.line
               for res in run["results"])


def test_cli_sarif_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    example = EXAMPLES / "smem_exchange_bug_nofence.py"
    code = main(["--format", "sarif", str(example)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    validate(doc)
    (res,) = doc["runs"][0]["results"]
    exp = expectations(example)[0]
    assert res["ruleId"] == "ERR-V01" and res["properties"]["variable"] == exp.variable
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == exp.line
    assert len(res["codeFlows"][0]["threadFlows"]) == 2
    (missing,) = [r for r in res["relatedLocations"] if r["message"]["text"] == "missing sync"]
    assert missing["physicalLocation"]["region"]["startLine"] == 14
    assert "between lines 13 and 14" in res["message"]["text"]
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_rejected_and_proved(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    code = main(["--format", "sarif", str(bad), str(EXAMPLES / "saxpy.py")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2
    validate(doc)
    (res,) = doc["runs"][0]["results"]  # saxpy is proved: no result for it
    assert res["ruleId"] == "ERR-P00" and res["level"] == "error"
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("bad.py")
    verdicts = {p["proc"]: p["verdict"] for p in doc["runs"][0]["properties"]["procs"]}
    assert verdicts["saxpy"] == "proved"


def test_non_proved_verdict_without_finding_is_a_warning() -> None:
    r = ProcResult("k.py", "k", Verdict.unknown, 1.0, loc=SrcLoc("k.py", 3, 1))
    doc = json.loads(to_sarif([r]))
    validate(doc)
    (res,) = doc["runs"][0]["results"]
    assert (res["ruleId"], res["level"]) == ("verdict-unknown", "warning")
    assert res["ruleId"] in [rule["id"] for rule in doc["runs"][0]["tool"]["driver"]["rules"]]


def test_paths_become_uri_references() -> None:
    r = ProcResult("/abs dir/k.py", "k", Verdict.unsupported, 0.0, loc=SrcLoc("/abs dir/k.py",
                                                                             2, 5))
    doc = json.loads(to_sarif([r]))
    validate(doc)
    uri = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri["uri"] == "file:///abs%20dir/k.py"


def test_schema_check_is_not_vacuous() -> None:
    r = ProcResult("k.py", "k", Verdict.unknown, 1.0, loc=SrcLoc("k.py", 3, 1))
    doc = json.loads(to_sarif([r]))
    doc["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)
