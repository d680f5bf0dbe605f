"""The pytest plugin (verifier/pytest_plugin.py), run with pytester in a scratch project: it is
opt-in, collects one item per proc of each kernel file, passes proved procs and fails the others
with the finding in the report."""

from __future__ import annotations

import shutil

import pytest
from conftest import EXAMPLES

pytest_plugins = ["pytester"]

KERNELS = ("smem_exchange.py", "smem_exchange_bug_nofence.py")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # Where spork-verify is installed its pytest11 entry point registers the plugin already;
    # `-p verifier.pytest_plugin` below is then the one registration, installed or not.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in KERNELS:
        shutil.copy(EXAMPLES / name, pytester.path / name)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    return pytester


def test_off_unless_asked(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "verifier.pytest_plugin")
    result.assert_outcomes(passed=1)


def test_flag_collects_one_item_per_proc(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "verifier.pytest_plugin", "--spork-verify", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*smem_exchange.py::smem_exchange PASSED*",
        "*smem_exchange_bug_nofence.py::smem_exchange_bug_nofence FAILED*",
    ])
    result.stdout.fnmatch_lines([
        "*smem_exchange_bug_nofence: REFUTED*",
        "*smem_exchange_bug_nofence.py:15:36: RAW[[]ERR-V01[]]: RAW HAZARD @ tile[[]255[]]*",
        "*fix: insert Fence(cuda_in_order, cuda_in_order) between lines 13 and 14*",
    ])


def test_ini_option_and_file_patterns(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nspork_verify = true\nspork_verify_files = smem_exchange.py\n")
    result = project.runpytest("-p", "verifier.pytest_plugin", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*smem_exchange.py::smem_exchange PASSED*"])


def test_a_file_that_does_not_load_is_one_failing_item(project: pytest.Pytester) -> None:
    project.makepyfile(broken="from verifier.lang import *\n\n@proc\ndef k(:\n")
    result = project.runpytest("-p", "verifier.pytest_plugin", "--spork-verify", "-v")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*broken.py::<file> FAILED*"])
    result.stdout.fnmatch_lines(["*broken.py:4:*ERR-P00*"])


def test_entry_point_names_the_plugin_module() -> None:
    """`pip install spork-verify` makes the plugin available to pytest by its entry point."""
    import tomllib

    from conftest import ROOT
    project_table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project_table["entry-points"]["pytest11"] == {"spork_verify": "verifier.pytest_plugin"}
