"""The pre-commit hook definition and the example GitHub Actions workflow are well-formed and
call the tool the way the README documents (SARIF uploaded to code scanning)."""

from __future__ import annotations

import re
import tomllib

import yaml
from conftest import ROOT


def test_pre_commit_hook_runs_the_console_script() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert hook["id"] == "spork-verify" and hook["entry"] in scripts
    assert hook["language"] == "python" and hook["types"] == ["python"]


def test_github_workflow_uses_the_action_at_a_pinned_commit() -> None:
    """The example workflow runs the repository's own Action (action.yml) at a full commit SHA;
    the Action uploads the SARIF file (tests/test_action.py runs it)."""
    workflow = yaml.safe_load((ROOT / "docs" / "ci" / "github-actions.yml").read_text())
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["verify"]["steps"]
    (step,) = [s for s in steps if "spork-verify@" in s.get("uses", "")]
    assert re.fullmatch(r"[\w-]+/spork-verify@[0-9a-f]{40}", step["uses"])
    assert set(step["with"]) <= set(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])
    assert step["with"]["paths"]


def test_pytest_plugin_is_registered() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"spork_verify": "verifier.pytest_plugin"}
