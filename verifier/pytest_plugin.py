"""pytest plugin: kernel files become test items, one per `@proc` (entry point `pytest11`).

Opt-in, so it never takes over a test run by being installed: `pytest --spork-verify` or
`spork_verify = true` in the ini file. Then every collected `.py` file that defines an `@proc`
and imports `verifier.lang` or upstream's `exo` (`from exo import *`, as upstream's own files
do), or matches the ini globs `spork_verify_files`, yields one item per proc; so does a file
named on the command line (`pytest --spork-verify k/x.py`). An item passes only when its proc is
proved; any other verdict fails and shows the finding as the text report prints it.

A kernel file is never imported by pytest's own Python collector: its signatures
(`x: f32[n] @ CudaGmemLinear`) are not Python to run, and `exo` is served only while
spork-verify loads the file (LOAD-6). The file is read as the CLI reads it: never a FIFO or a
device (CLI-2).
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

import pytest

from verifier.results import ProcResult, Verdict
from verifier.user_files import UnreadableFile, read_user_file

# verifier.cli and the verifier's packages are imported only when a kernel file is collected,
# so an installed-but-unused plugin costs a pytest run nothing


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("spork-verify")
    group.addoption("--spork-verify", action="store_true", default=False,
                    help="collect Exo-GPU kernel files and verify each @proc as a test item")
    group.addoption("--spork-verify-args", default="", metavar="ARGS",
                    help="extra spork-verify options for every item, e.g. '--timeout 60'")
    parser.addini("spork_verify", type="bool", default=False,
                  help="collect kernel files as spork-verify items (same as --spork-verify)")
    parser.addini("spork_verify_files", type="args", default=[],
                  help="glob patterns (relative to rootdir) of the kernel files to verify")


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("--spork-verify") or config.getini("spork_verify"))


_KERNEL_IMPORT = re.compile(rb"^[ \t]*(?:from|import)[ \t]+(?:verifier\.lang|exo)\b", re.M)
_PROC = re.compile(rb"^[ \t]*@(?:\w+\.)*proc\b", re.M)
_MAX_BYTES = 16 << 20  # as the CLI's limit (LOAD-1): larger files are not kernels


def _is_kernel_file(config: pytest.Config, path: Path, named: bool) -> bool:
    """A kernel file: it matches the ini globs, or it defines an `@proc` and imports
    `verifier.lang` or upstream's `exo`; a file named on the command line needs only the
    `@proc`. A file that cannot be read as a file (a FIFO, a device) is only collected when
    named, so that its refusal is reported."""
    patterns = config.getini("spork_verify_files")
    if patterns:
        rel = path.relative_to(config.rootpath).as_posix() if path.is_relative_to(
            config.rootpath) else path.as_posix()
        return any(fnmatch.fnmatch(rel, pattern) for pattern in patterns)
    try:
        data = read_user_file(str(path), _MAX_BYTES)
    except UnreadableFile:
        return named
    return _PROC.search(data) is not None and (named or _KERNEL_IMPORT.search(data) is not None)


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    """A kernel file becomes a `KernelFile`, and only that: the Python collector's module for
    it (made for `test_*.py` names and for files named on the command line) is dropped."""
    collected = yield
    if file_path.suffix != ".py" or file_path.name == "conftest.py" or \
            not _enabled(parent.config) or not _is_kernel_file(
                parent.config, file_path, parent.session.isinitpath(file_path)):
        return collected
    kept = [c for c in collected if not isinstance(c, pytest.Module)]
    return [*kept, KernelFile.from_parent(parent, path=file_path)]


class KernelFile(pytest.File):
    """A kernel file: one item per proc (or one item for a file that does not load)."""

    def collect(self) -> Any:
        from verifier.load.load_scheduled import ExoGpuUnavailable, load_file

        args = self._args([])
        try:
            loaded = load_file(str(self.path), args.load_timeout, args.exo_gpu_python)
        except ExoGpuUnavailable as e:  # SCHED-5: a usage error, not a kernel's verdict
            raise pytest.UsageError(str(e)) from None
        if loaded.error is not None or not loaded.procs:
            yield ProcItem.from_parent(self, name="<file>", proc=None)
            return
        for proc in loaded.procs:
            yield ProcItem.from_parent(self, name=proc.name, proc=proc.name)

    def _args(self, extra: list[str]) -> Any:
        from verifier.cli import build_parser

        options = self.config.getoption("--spork-verify-args").split()
        return build_parser().parse_args([*options, *extra, str(self.path)])


class SporkVerifyFailure(Exception):
    """A proc that is not proved; carries its results for the failure report."""

    def __init__(self, results: list[ProcResult]) -> None:
        from verifier.report.text import to_text

        super().__init__(to_text(results))
        self.results = results


class ProcItem(pytest.Item):
    def __init__(self, *, proc: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.proc = proc

    def runtest(self) -> None:
        from verifier.cli import verify_file

        assert isinstance(self.parent, KernelFile)
        args = self.parent._args(["--proc", self.proc] if self.proc else [])
        results, _ = verify_file(str(self.path), args)
        if not results or any(r.verdict is not Verdict.proved or r.internal_error
                              for r in results):
            raise SporkVerifyFailure(results)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, SporkVerifyFailure):
            if not excinfo.value.results:
                return f"spork-verify: no @proc found in {self.path}"
            return str(excinfo.value).rstrip()
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"spork-verify {self.name}"
