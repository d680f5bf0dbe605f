"""docs/ agrees with the code: the error-code catalogue lists exactly the codes the verifier can
emit, generated pages are current, every cited rule id is defined, the README and the docs link
nothing outside the repository, and every example's JSON report matches docs/json-schema.json."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import jsonschema
import pytest
from conftest import EXAMPLES, ROOT

from verifier.cli import main
from verifier.report.catalog import CATALOG_FILE, catalog
from verifier.results import FindingKind, Verdict

CODE = re.compile(r"\bERR-(?:[A-Z]\d\d|USAGE)\b")
SCHEMA = json.loads((ROOT / "docs" / "json-schema.json").read_text())


def _generate_module():  # docs/generate.py is a script, not a package module
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def codes_in_source() -> set[str]:
    return {code for path in (ROOT / "verifier").rglob("*.py")
            for code in CODE.findall(path.read_text(encoding="utf-8"))}


def test_every_emitted_code_is_catalogued_and_vice_versa() -> None:
    in_code, documented = codes_in_source(), set(catalog())
    assert in_code - documented == set(), "codes the verifier emits but the catalogue lacks"
    assert documented - in_code == set(), "catalogued codes the verifier never emits"


def test_catalogue_entries_are_complete() -> None:
    for entry in catalog().values():
        assert entry.title and entry.rule and entry.messages, entry.code
        assert entry.fix and entry.example, entry.code
        assert re.fullmatch(r"(LANG|SEM|COLL|LOAD|DIAL|SEC|SYNC|BW)-[\d.]+(, [\d.]+)*", entry.rule), entry.code


def test_generated_pages_are_current() -> None:
    gen = _generate_module()
    for name, make in gen.PAGES.items():
        assert (ROOT / "docs" / name).read_text(encoding="utf-8") == make(), \
            f"docs/{name} is stale: run python docs/generate.py"
    text = (ROOT / "docs" / "error-codes.md").read_text()
    assert all(f"### {code}" in text for code in catalog())


def test_every_cited_rule_is_defined_in_the_repository() -> None:
    gen = _generate_module()
    cited = gen.cited_rules()
    assert {"SEM-4.5", "COLL-2.6", "LANG-4.10"} <= set(cited)
    assert [rule for rule in cited if gen.definition(rule) is None] == []
    rules_md = (ROOT / "docs" / "rules.md").read_text()
    assert all(f"| {rule} |" in rules_md for rule in cited)


_SPEC_ID = r"[A-Z]+(?:-[A-Z]+)*-[A-Z]?\d+(?:\.\d+)*|[A-Z]\d+"
# where specs/ define an id: a line opening with `Choice X`, a bold bullet `* **X ...**`
# (`- **X**`, `* **Choice X**`), or a heading `## X ...`; tables and prose only cite ids
SPEC_DEFINITION = re.compile(rf"^(?:\s*(?:[*-]\s+)?(?P<choice>Choice)\s+(?P<c>{_SPEC_ID})\b"
                             rf"|\s*[*-]\s+\*\*(?P<bold_choice>Choice\s+)?(?P<b>{_SPEC_ID})\b"
                             rf"|#+\s+(?P<h>{_SPEC_ID})\b)")


def spec_definitions() -> dict[str, list[str]]:
    """Every id specs/ defines (a choice as `Choice X`) -> where, as `file:line`."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "specs").glob("*.md")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = SPEC_DEFINITION.match(line)
            if m:
                name = m["c"] or m["b"] or m["h"]
                choice = m["choice"] or m["bold_choice"]
                found.setdefault(f"Choice {name}" if choice else name, []).append(
                    f"{path.name}:{n}")
    return found


def test_no_rule_or_choice_id_is_defined_twice() -> None:
    """One id, one definition across specs/ (Choice M10 and M11 once named two choices each:
    the machine's became M16, M17)."""
    found = spec_definitions()
    assert {"Choice M10", "Choice M16", "Choice M17", "Choice S1", "D4", "DIAL-21", "CG-X1",
            "CLI-7"} <= set(found)
    assert {k: v for k, v in found.items() if len(v) > 1} == {}


def test_the_duplicate_check_sees_a_duplicate() -> None:
    assert SPEC_DEFINITION.match("* Choice M10 (batched machine): a")["c"] == "M10"
    assert SPEC_DEFINITION.match("Choice M10 (pending tags): a")["c"] == "M10"
    assert SPEC_DEFINITION.match("- **CG-X1 (exit barrier).** With")["b"] == "CG-X1"
    assert SPEC_DEFINITION.match("## CLI-7 Budgets")["h"] == "CLI-7"
    assert SPEC_DEFINITION.match("| SEM-4.5 | `hazards` |") is None


MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", ["README.md", *sorted(
    str(p.relative_to(ROOT)) for p in [*(ROOT / "docs").rglob("*.md"), *(ROOT / "specs").glob(
        "*.md")])])
def test_pages_link_only_inside_the_repository(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert "../shared" not in text and "/work/" not in text
    for target in MARKDOWN_LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # an external URL, not a path
        resolved = ((ROOT / page).parent / target).resolve()
        assert resolved.exists() and ROOT in resolved.parents, f"{page}: broken link {target}"


def test_no_source_refers_to_the_shared_folder() -> None:
    for path in (ROOT / "verifier").rglob("*.py"):
        assert "../shared" not in path.read_text(encoding="utf-8"), path


CONFLICT_MARKER = re.compile(r"^(<{7} |={7}$|>{7} )", re.M)


def test_no_merge_conflict_is_left_in_a_text_file() -> None:
    """A merge left markers in specs/verification.md once, unnoticed by every other test."""
    tracked = [p for part in ("specs", "docs", "verifier", "tests", "benchmarks", "proofs",
                              "examples") for p in (ROOT / part).rglob("*")
               if p.suffix in {".md", ".py", ".txt", ".toml", ".json", ".csv"}]
    tracked += [ROOT / "README.md", ROOT / "pyproject.toml"]
    assert len(tracked) > 100
    found = [str(p.relative_to(ROOT)) for p in tracked
             if CONFLICT_MARKER.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert not found, f"merge conflict markers in {found}"


def test_the_conflict_check_sees_a_marker() -> None:
    assert CONFLICT_MARKER.search("text\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\n")
    assert not CONFLICT_MARKER.search("a table\n======= heading\n")


def test_every_example_report_matches_the_json_schema() -> None:
    validator = jsonschema.Draft7Validator(SCHEMA)
    examples = sorted(EXAMPLES.glob("*.py"))
    for example in examples:  # the recorded reports are --format json minus timings
        doc = json.loads((ROOT / "proofs" / f"{example.stem}.json").read_text())
        validator.validate(doc)
    assert len(examples) > 20


def test_live_json_report_matches_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--format", "json", str(EXAMPLES / "smem_exchange_bug_nofence.py"),
                 str(EXAMPLES / "saxpy.py")])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    jsonschema.Draft7Validator(SCHEMA).validate(doc)
    assert all("time_s" in r for r in doc["results"])
    broken = {**doc, "schema": doc["schema"] + 1}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(SCHEMA).validate(broken)


def test_schema_and_contract_name_every_kind_and_verdict() -> None:
    kinds = SCHEMA["definitions"]["finding"]["properties"]["kind"]["enum"]
    assert sorted(kinds) == sorted(k.value for k in FindingKind)
    contract = (ROOT / "docs" / "json-contract.md").read_text()
    assert all(f"`{v.value}`" in contract for v in Verdict)


def test_explain_prints_rule_example_and_fix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--explain", "err-v01"]) == 0
    out = capsys.readouterr().out
    entry = catalog()["ERR-V01"]
    assert out.startswith("ERR-V01") and "SEM-4.5" in out
    assert entry.fix in out and "Fence(cuda_in_order, cuda_in_order)" in out
    assert main(["--explain", "ERR-Z99"]) == 2
    assert "unknown error code" in capsys.readouterr().err


def test_catalogue_ships_with_the_package() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert CATALOG_FILE.name in {"error_codes.toml"} and '"*.toml"' in pyproject


def test_ci_runs_the_readme_test_command() -> None:
    """The README's two commands at the top: install and prove an example, install and test;
    `.ci/run` runs that same test command (issue 20: in parallel) with `-m "not slow"`: the
    default run and the `extended` tests it leaves out for time. The slow set (`-m slow`) is
    not in it until it has passed whole on merged main (README "Tests")."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2
    install, test = (part.strip() for part in block[1].split("&&"))
    assert install == "python3 -m pip install -e '.[test]'" and "-n auto" in test
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.startswith("python3 -m pytest")]
    assert ci == [f"{test} -m \"not slow\" -p no:cacheprovider"]
