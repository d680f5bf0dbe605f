"""The pytest plugin (verifier/pytest_plugin.py), run with pytester in a scratch project: it is
opt-in, collects one item per proc of each kernel file, passes proved procs and fails the others
with the finding in the report."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import EXAMPLES, ROOT

pytest_plugins = ["pytester"]

KERNELS = ("smem_exchange.py", "smem_exchange_bug_nofence.py")
UPSTREAM_STYLE = ROOT / "tests" / "upstream_style"


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


def test_a_file_named_on_the_command_line_is_collected(project: pytest.Pytester) -> None:
    """`pytest --spork-verify k/x.py`: the named file is a kernel even outside `python_files`,
    and pytest's own collector never imports it (its signatures are not Python to run)."""
    (project.path / "k").mkdir()
    shutil.copy(EXAMPLES / "saxpy.py", project.path / "k" / "x.py")
    result = project.runpytest("-p", "verifier.pytest_plugin", "--spork-verify", "k/x.py", "-v")
    result.assert_outcomes(passed=1, errors=0)
    result.stdout.fnmatch_lines(["*k/x.py::saxpy PASSED*"])


def test_upstream_style_kernels_are_collected(project: pytest.Pytester) -> None:
    """A kernel written for upstream (`from exo import *`, a sibling config module) is collected
    like one importing verifier.lang; the sibling module without a proc is not."""
    (project.path / "upstream").mkdir()
    for name in ("saxpy_upstream_imports.py", "saxpy_upstream_imports_bug_oob.py",
                 "saxpy_pre_config.py"):
        shutil.copy(UPSTREAM_STYLE / name, project.path / "upstream" / name)
    result = project.runpytest("-p", "verifier.pytest_plugin", "--spork-verify", "upstream", "-v")
    result.assert_outcomes(passed=1, failed=1, errors=0)
    result.stdout.fnmatch_lines(["*saxpy_upstream_imports.py::saxpy PASSED*"])
    result.stdout.fnmatch_lines(["*saxpy_upstream_imports_bug_oob.py::saxpy FAILED*",
                                 "*out-of-bounds*"])
    assert "saxpy_pre_config" not in result.stdout.str()


def test_a_kernel_named_like_a_test_module_is_collected_once(project: pytest.Pytester) -> None:
    shutil.copy(EXAMPLES / "saxpy.py", project.path / "test_saxpy_kernel.py")
    result = project.runpytest("-p", "verifier.pytest_plugin", "--spork-verify", "-v",
                               "test_saxpy_kernel.py", "test_plain.py")
    result.assert_outcomes(passed=2, errors=0)
    result.stdout.fnmatch_lines(["*test_saxpy_kernel.py::saxpy PASSED*"])


def test_a_fifo_never_blocks_collection(project: pytest.Pytester) -> None:
    """A named pipe among the files is passed over (reading it would block, CLI-2)."""
    os.mkfifo(project.path / "pipe_kernel.py")
    result = project.runpytest("-p", "verifier.pytest_plugin", "--spork-verify", "-v")
    result.assert_outcomes(passed=2, failed=1)
