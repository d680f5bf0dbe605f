"""The GitHub Action (`action.yml`), run as GitHub would run its steps, offline (issue 19).

An act-style dry run: the action's `run:` steps are executed with bash in order, their
`${{ ... }}` expressions substituted (inputs, `github.action_path`, `runner.temp`, earlier
steps' outputs), their `if:` conditions evaluated, in a scratch repository holding a proved and
a refuted kernel. spork-verify is installed from a local clone of this repository at a pinned
commit (HEAD), with pip kept offline. `uses:` steps (the upload to code scanning) are not run;
their inputs are checked. Every run must leave a SARIF file valid against the official 2.1.0
schema — also one whose command line spork-verify refuses and one whose install fails."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from conftest import EXAMPLES, ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
OFFLINE_PIP = "--no-index --no-deps --no-build-isolation"
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class ActionRun:
    """What a dry run did: each step's outcome (success, failure, skipped) and outputs."""

    outcomes: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    uses: list[dict[str, Any]] = field(default_factory=list)


class DryRun:
    """Runs the action's steps as the GitHub runner would, for the contexts the action uses."""

    def __init__(self, workspace: Path, temp: Path, inputs: dict[str, str]) -> None:
        self.workspace, self.temp = workspace, temp
        declared = ACTION["inputs"]
        unknown = set(inputs) - set(declared)
        assert not unknown, f"inputs the action does not declare: {unknown}"
        self.contexts = {"github.action_path": str(ROOT),
                         "github.action_repository": "OWNER/spork-verify",
                         "runner.temp": str(temp)}
        self.inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()}
        self.inputs = {k: self.substitute(v) for k, v in self.inputs.items()}
        self.inputs.update(inputs)
        self.run = ActionRun()

    def value(self, expr: str) -> str:
        if expr.startswith("inputs."):
            return self.inputs[expr.removeprefix("inputs.")]
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if m:
            return self.run.outputs.get(m[1], {}).get(m[2], "")
        if expr in self.contexts:
            return self.contexts[expr]
        raise AssertionError(f"the dry run does not know the expression {expr!r}")

    def substitute(self, text: str) -> str:
        return _EXPR.sub(lambda m: self.value(m[1]), text)

    def condition(self, step: dict[str, Any]) -> bool:
        """`if:` as the runner reads it: terms joined by `&&`; `always()` or a comparison.
        Without `if:`, a step runs only when every earlier step succeeded (success())."""
        text = step.get("if")
        if text is None:
            return all(o != "failure" for o in self.run.outcomes.values())
        result = True
        for term in _EXPR.sub(lambda m: m[1], str(text)).split("&&"):
            term = term.strip()
            m = re.fullmatch(r"([\w.-]+)\s*(==|!=)\s*'([^']*)'", term)
            if term == "always()":
                continue
            assert m, f"the dry run does not know the condition {term!r}"
            equal = self.value(m[1]) == m[3]
            result &= equal if m[2] == "==" else not equal
        return result

    def execute(self) -> ActionRun:
        for index, step in enumerate(ACTION["runs"]["steps"]):
            name = step.get("id", f"step{index}")
            if not self.condition(step):
                self.run.outcomes[name] = "skipped"
                continue
            if "uses" in step:
                self.run.uses.append({**step, "with": {k: self.substitute(str(v)) for k, v in
                                                       step.get("with", {}).items()}})
                self.run.outcomes[name] = "success"
                continue
            self._bash(name, step)
        return self.run

    def _bash(self, name: str, step: dict[str, Any]) -> None:
        assert step["shell"] == "bash"
        script = self.temp / f"{name}.sh"
        script.write_text(self.substitute(step["run"]))
        output_file = self.temp / f"{name}.output"
        output_file.write_text("")
        env = {**os.environ, "GITHUB_OUTPUT": str(output_file),
               "GITHUB_ACTION_PATH": str(ROOT), "RUNNER_TEMP": str(self.temp),
               "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               **{k: self.substitute(str(v)) for k, v in step.get("env", {}).items()}}
        env.pop("PYTEST_ADDOPTS", None)
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                              cwd=self.workspace, env=env, capture_output=True, text=True,
                              timeout=600)
        self.run.logs[name] = done.stdout + done.stderr
        self.run.outcomes[name] = "success" if done.returncode == 0 else "failure"
        self.run.outputs[name] = dict(line.split("=", 1) for line in
                                      output_file.read_text().splitlines() if "=" in line)


def _head() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("the action installs from a git commit; this checkout is not a git "
                    "repository")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's repository: a proved kernel, a refuted one and a plain Python file."""
    repo = tmp_path_factory.mktemp("user_repo")
    (repo / "kernels").mkdir()
    for name in ("saxpy.py", "smem_exchange_bug_nofence.py"):
        shutil.copy(EXAMPLES / name, repo / "kernels" / name)
    (repo / "setup.py").write_text("raise SystemExit('the user repository is not installed')\n")
    return repo


@pytest.fixture(scope="module")
def installed(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ActionRun]:
    """One full dry run (install, verify, upload, fail); later runs reuse its installation."""
    temp = tmp_path_factory.mktemp("runner_temp")
    head = _head()
    run = DryRun(workspace, temp, {"paths": "kernels/*.py", "ref": head,
                                   "repository": str(ROOT), "python": sys.executable,
                                   "pip-args": OFFLINE_PIP}).execute()
    probe = subprocess.run([str(temp / "spork-verify" / "venv" / "bin" / "python"), "-c",
                            "import z3, sympy, networkx, islpy"], capture_output=True)
    if run.outcomes["install"] == "success" and probe.returncode != 0:
        pytest.skip("spork-verify's dependencies are not visible from a fresh "
                    "--system-site-packages venv here (installed in another venv)")
    return temp, run


def _sarif(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)
    return doc


@pytest.mark.slow  # installs spork-verify into a fresh venv: .ci/run runs it (`-m slow`)
def test_dry_run_installs_the_pinned_commit_and_uploads_a_valid_sarif(
        workspace: Path, installed: tuple[Path, ActionRun]) -> None:
    temp, run = installed
    assert run.outcomes["install"] == "success", run.logs.get("install")
    assert run.outputs["install"]["commit"] == _head()
    venv_python = temp / "spork-verify" / "venv" / "bin" / "python"
    where = subprocess.run([str(venv_python), "-P", "-c",
                            "import verifier; print(verifier.__file__)"],
                           capture_output=True, text=True, check=True, cwd=temp).stdout
    assert where.startswith(str(temp / "spork-verify" / "venv")), where  # the clone, installed
    assert run.outcomes["verify"] == "success" and run.outputs["verify"]["exit-code"] == "1"
    doc = _sarif(workspace / "spork-verify.sarif")
    results = doc["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["ERR-V01"]
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "kernels/smem_exchange_bug_nofence.py"
    procs = {p["proc"]: p["verdict"] for p in doc["runs"][0]["properties"]["procs"]}
    assert procs == {"saxpy": "proved", "smem_exchange_bug_nofence": "refuted"}
    (upload,) = run.uses
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"] == {"sarif_file": "spork-verify.sarif", "category": "spork-verify"}
    assert run.outcomes["step3"] == "failure"  # the job fails: a proc is refuted


def _run_without_install(workspace: Path, temp: Path,
                         inputs: dict[str, str]) -> tuple[ActionRun, dict[str, Any]]:
    """The steps after the install, reusing the installation of the first run (same temp)."""
    dry = DryRun(workspace, temp, {"paths": "kernels/*.py", "python": sys.executable,
                                   "upload": "false", **inputs})
    dry.run.outcomes["install"] = "success"
    for index, step in enumerate(ACTION["runs"]["steps"]):
        name = step.get("id", f"step{index}")
        if name != "install" and dry.condition(step) and "run" in step:
            dry._bash(name, step)
    return dry.run, _sarif(workspace / dry.inputs["sarif-file"])


@pytest.mark.slow  # reuses that installation
@pytest.mark.parametrize("inputs,words", [
    ({"args": "--timeout nan"}, "--timeout: expected a positive number of seconds"),
    ({"paths": "kernels/saxpy.py --proc"}, "expected one argument"),
    ({"paths": ""}, "give at least one PATH"),
], ids=["bad-option", "bad-paths", "no-paths"])
def test_usage_error_still_leaves_a_sarif_saying_so(
        workspace: Path, installed: tuple[Path, ActionRun], inputs: dict[str, str],
        words: str) -> None:
    temp, _ = installed
    run, doc = _run_without_install(workspace, temp, inputs)
    assert run.outputs["verify"]["exit-code"] == "2"
    (result,) = doc["runs"][0]["results"]
    assert result["ruleId"] == "ERR-USAGE" and result["level"] == "error"
    assert words in result["message"]["text"], result["message"]["text"]
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is False
    assert run.outcomes["step3"] == "failure"


def test_a_failed_install_still_leaves_a_sarif_saying_so(workspace: Path,
                                                         tmp_path: Path) -> None:
    """A `ref` that is not a full commit SHA stops the install; the verify step runs anyway
    (`if: always()`) and writes the one-result SARIF; the job fails."""
    run = DryRun(workspace, tmp_path, {"paths": "kernels/*.py", "ref": "main",
                                       "repository": str(ROOT), "python": sys.executable,
                                       "sarif-file": "out/report.sarif"}).execute()
    assert run.outcomes["install"] == "failure"
    assert "ref must be a full 40-hex commit SHA" in run.logs["install"]
    assert run.outputs["verify"]["exit-code"] == "2"
    doc = _sarif(workspace / "out" / "report.sarif")
    (result,) = doc["runs"][0]["results"]
    assert "could not be installed" in result["message"]["text"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "kernels/saxpy.py"
    assert run.uses[0]["with"]["sarif_file"] == "out/report.sarif"
    assert run.outcomes["step3"] == "failure"


def test_the_action_never_installs_the_users_repository() -> None:
    """The old example ran `pip install .` in the user's checkout: that installs the user's
    project, not spork-verify (which is on no package index)."""
    install = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "install")
    assert '"$source_dir"' in install["run"] and "install ." not in install["run"]
    workflow = (ROOT / "docs" / "ci" / "github-actions.yml").read_text()
    assert "pip install ." not in workflow
