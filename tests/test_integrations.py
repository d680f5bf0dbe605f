"""The pre-commit hook definition and the example GitHub Actions workflow are well-formed and
call the tool the way the README documents (SARIF uploaded to code scanning)."""

from __future__ import annotations

import tomllib

import yaml
from conftest import ROOT


def test_pre_commit_hook_runs_the_console_script() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert hook["id"] == "spork-verify" and hook["entry"] in scripts
    assert hook["language"] == "python" and hook["types"] == ["python"]


def test_github_workflow_uploads_sarif() -> None:
    workflow = yaml.safe_load((ROOT / "docs" / "ci" / "github-actions.yml").read_text())
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["verify"]["steps"]
    verify = next(s for s in steps if s.get("id") == "verify")
    assert "--format sarif --output spork-verify.sarif" in verify["run"]
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == "spork-verify.sarif" and upload["if"] == "always()"
    assert steps[-1]["if"] == "steps.verify.outputs.exit_code != '0'"


def test_pytest_plugin_is_registered() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"spork_verify": "verifier.pytest_plugin"}
