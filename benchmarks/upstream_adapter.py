"""pytest plugin standing in for upstream Exo-GPU's tests/conftest.py (issue 8).

Loaded by benchmarks/upstream_conformance.py into a pytest run over upstream's tests/cuda
files, unmodified. `exo.*` names spork-verify's stdlib for the whole run (LOAD-6); the
`compiler` fixture builds the test's procs and verifies them (static checks, then the proof
under a short timeout) instead of compiling C. A rejected or refuted proc raises
`SporkVerifyRejection` carrying spork-verify's message, as upstream's compile raises; an
accepted proc counts as matching upstream's acceptance (golden C is out of scope).
Fixtures that run kernels on a GPU skip with the reason `GPU-only`.

Every test appends one JSON line to $SPORK_CONFORMANCE_LOG: its outcome, the long report of a
failure, and the verdict of each proc the fixtures verified.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable

import pytest

from verifier.diagnostics import SporkError
from verifier.lang.upstream_modules import upstream_aliases

GPU_ONLY = "GPU-only"
_calls: list[dict[str, Any]] = []
_aliases = upstream_aliases()


class SporkVerifyRejection(Exception):
    """spork-verify rejected or refuted a proc that a test asked to compile."""


def pytest_configure(config: pytest.Config) -> None:
    _aliases.__enter__()


def pytest_unconfigure(config: pytest.Config) -> None:
    _aliases.__exit__(None, None, None)


def _timeout() -> float:
    return float(os.environ.get("SPORK_CONFORMANCE_TIMEOUT", "20"))


def _verify(p: Any) -> None:
    from verifier.encode import Options, verify_proc
    from verifier.lang import ir
    from verifier.results import Verdict

    if not isinstance(p, ir.Proc):
        _calls.append({"proc": repr(p)[:80], "verdict": "not-a-proc", "message": ""})
        raise TypeError(f"mkproc returned {type(p).__name__}, not a spork-verify proc")
    try:
        result = verify_proc(p, Options(timeout_s=_timeout()))
    except SporkError as e:
        _record_error(p.name, e)
        raise
    text = "\n".join(f"{f.kind.value}: {f.message}" for f in result.findings)
    _calls.append({"proc": p.name, "verdict": result.verdict.value, "message": text})
    if result.verdict in (Verdict.rejected, Verdict.refuted):
        raise SporkVerifyRejection(f"{p.name}: {result.verdict.value}\n{text}")
    if result.verdict is not Verdict.proved:
        raise SporkVerifyRejection(f"{p.name}: {result.verdict.value} (not verified)\n{text}")


def _record_error(name: str, e: SporkError) -> None:
    from verifier.diagnostics import RejectedInput

    verdict = "rejected" if isinstance(e, RejectedInput) else "unsupported"
    _calls.append({"proc": name, "verdict": verdict, "message": e.render()})


def _build(mkproc: Callable[..., Any], kwargs: dict[str, Any]) -> list[Any]:
    try:
        procs = mkproc(**kwargs)
    except SporkError as e:
        _record_error(getattr(e, "proc", None) or mkproc.__name__, e)
        raise
    return list(procs) if isinstance(procs, (list, tuple)) else [procs]


class VerifyingCompiler:
    """The part of upstream's `compiler` fixture that tests/cuda calls without a GPU."""

    def cuda_cpu_test(self, mkproc: Callable[..., Any], golden: Any = None, sm: Any = None,
                      **kwargs: Any) -> None:
        for p in _build(mkproc, kwargs):
            _verify(p)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        pytest.skip(f"{GPU_ONLY}: compiler.{name} builds or runs CUDA code")


@pytest.fixture
def compiler() -> VerifyingCompiler:
    return VerifyingCompiler()


@pytest.fixture
def compiler_Sm80() -> None:
    pytest.skip(f"{GPU_ONLY}: compiler_Sm80 runs kernels on an sm_80 device")


@pytest.fixture
def compiler_Sm90a() -> None:
    pytest.skip(f"{GPU_ONLY}: compiler_Sm90a runs kernels on an sm_90a device")


@pytest.fixture
def golden() -> None:
    return None  # generated C is not compared (out of scope)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _calls.clear()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call" and not (report.failed or report.skipped):
        return
    log = os.environ.get("SPORK_CONFORMANCE_LOG")
    if not log:
        return
    longrepr = ""
    if report.skipped and isinstance(report.longrepr, tuple):
        longrepr = str(report.longrepr[2])
    elif report.longrepr is not None:
        longrepr = str(report.longrepr)
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"nodeid": report.nodeid, "when": report.when,
                            "outcome": report.outcome, "longrepr": longrepr[-4000:],
                            "calls": list(_calls)}) + "\n")
