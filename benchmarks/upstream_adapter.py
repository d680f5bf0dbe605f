"""pytest plugin standing in for upstream Exo-GPU's tests/conftest.py (issue 8).

Loaded by benchmarks/upstream_conformance.py into a pytest run over upstream's tests/cuda
files, unmodified. `exo.*` names spork-verify's stdlib for the whole run (LOAD-6); the
`compiler` fixture builds the test's procs and verifies them (static checks, then the proof
under a short timeout) instead of compiling C. A rejected or refuted proc raises
`SporkVerifyRejection` carrying spork-verify's message, as upstream's compile raises; an
accepted proc counts as matching upstream's acceptance (golden C is out of scope).
Fixtures that run kernels on a GPU skip with the reason `GPU-only`. `p.sync_check(...)` runs
spork-verify's concrete machine (API-3). Upstream's test-helper packages under `exo.platforms`
(e.g. `exo.platforms.gemm_Sm90a_test`) are read from the checkout in
$SPORK_UPSTREAM_CHECKOUT when a test file imports them. A test whose proc construction calls a
rewrite spork-verify does not reproduce (API-2) gets its procs from upstream Exo-GPU when
$SPORK_CONFORMANCE_EXO_GPU_PYTHON names a Python with it: that construction runs there and the
procs upstream prints are verified (specs/upstream_api.md SCHED-2), as `--exo-gpu-python` does.

With $SPORK_CONFORMANCE_EMIT_CUDA naming a folder, every proc it proves (verified with early
releases, as `--emit-cuda` asks) is also lowered there, and `emit.jsonl` there lists each proc
with `ok` or the lowering's refusal (issue 18: every proc that is proved lowers).

Every test appends one JSON line to $SPORK_CONFORMANCE_LOG: its outcome, the long report of a
failure, and the verdict of each proc the fixtures verified; a file that fails at collection
appends one line with `"when": "collect"` and the error.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.abc
import importlib.machinery
import importlib.util
import json
import multiprocessing
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from verifier.diagnostics import SporkError
from verifier.load.load_scheduled import needs_exo_gpu
from verifier.load.upstream_modules import upstream_aliases

GPU_ONLY = "GPU-only"
_calls: list[dict[str, Any]] = []
_aliases = upstream_aliases()


class SporkVerifyRejection(Exception):
    """spork-verify rejected or refuted a proc that a test asked to compile."""


class _UpstreamHelpers(importlib.abc.MetaPathFinder):
    """`exo.platforms.<package>` modules that are upstream's own test helpers (not platform
    modules spork-verify serves), loaded from the checkout's source when a test imports them."""

    PACKAGES = ("gemm_Sm90a_test", "Sm90.tk_gemm_util")

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        parts = name.split(".")
        checkout = os.environ.get("SPORK_UPSTREAM_CHECKOUT")
        below = ".".join(parts[2:])
        if not checkout or parts[:2] != ["exo", "platforms"] or len(parts) < 3 or \
                not any(below == p or below.startswith(p + ".") for p in self.PACKAGES):
            return None
        base = Path(checkout, "src", *parts)
        if base.is_dir():
            return importlib.util.spec_from_file_location(
                name, base / "__init__.py", submodule_search_locations=[str(base)])
        if base.with_suffix(".py").is_file():
            path = str(base.with_suffix(".py"))
            return importlib.util.spec_from_file_location(name, path,
                                                          loader=_HelperLoader(name, path))
        return None


class _HelperLoader(importlib.machinery.SourceFileLoader):
    """Runs an upstream helper module; its exported functions that build procs are wrapped so
    that one stopping at a rewrite spork-verify does not reproduce (API-2), called by a test
    itself rather than through the `compiler` fixture (which rebuilds the whole mkproc), is
    rebuilt under upstream Exo-GPU (SCHED-2), as `_build` does."""

    def exec_module(self, module: Any) -> None:
        super().exec_module(module)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name, None)
            if callable(value) and getattr(value, "__module__", None) == module.__name__ and \
                    not isinstance(value, type):
                setattr(module, name, _rebuilt_when_unsupported(module.__name__, name, value))


def _rebuilt_when_unsupported(module: str, name: str, build: Callable[..., Any]
                              ) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return build(*args, **kwargs)
        except SporkError as e:
            if _in_build[0] or not needs_exo_gpu(e) or not os.environ.get(EXO_GPU_ENV):
                raise
        text = ", ".join([_value_text(a, module) for a in args] +
                         [f"{k}={_value_text(v, module)}" for k, v in kwargs.items()])
        call = f"__import__({module!r}, fromlist=['_']).{name}({text})"
        test_file = sys._getframe(1).f_code.co_filename  # the test module calling the helper
        procs = _built_by_exo_gpu_call(test_file, call, name)
        return procs[0] if len(procs) == 1 else procs
    wrapper.__name__ = name
    return wrapper


def _value_text(v: Any, module: str) -> str:
    """A helper's argument as upstream can evaluate it: plain values, an element type by name,
    an enum member or a dataclass of the helper module by constructor."""
    from verifier.lang.stdlib.scalars import ScalarInfo

    mod = f"__import__({module!r}, fromlist=['_'])"
    if v is None or isinstance(v, (bool, int, float, str)):
        return repr(v)
    if isinstance(v, ScalarInfo):
        return repr(v.name)
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_value_text(x, module) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner},)"
    if isinstance(v, enum.Enum) and type(v).__module__ == module:
        return f"{mod}.{type(v).__name__}.{v.name}"
    if dataclasses.is_dataclass(v) and type(v).__module__ == module:
        fields = ", ".join(f"{f.name}={_value_text(getattr(v, f.name), module)}"
                           for f in dataclasses.fields(v))
        return f"{mod}.{type(v).__name__}({fields})"
    raise TypeError(f"cannot pass {v!r} to upstream Exo-GPU")


_compiler_fixtures = [0]  # how many `compiler` fixtures are live, as upstream's conftest counts


def _harness_sync_check(proc: Any, sizes: Any) -> None:
    """`p.sync_check(...)` as upstream's test harness allows it: only inside a test that holds
    the `compiler` fixture (upstream's conftest asserts this; a meta test checks it)."""
    from verifier.semantics.sync_check import sync_check

    assert _compiler_fixtures[0] >= 1, "Missing compiler fixture"
    sync_check(proc, sizes)


def pytest_configure(config: pytest.Config) -> None:
    from verifier.lang.ir import ir

    ir.SYNC_CHECK_HOOK[0] = _harness_sync_check  # the concrete machine behind `p.sync_check`
    _aliases.__enter__()
    sys.meta_path.insert(0, _UpstreamHelpers())


def pytest_unconfigure(config: pytest.Config) -> None:
    _aliases.__exit__(None, None, None)


def _timeout() -> float:
    return float(os.environ.get("SPORK_CONFORMANCE_TIMEOUT", "20"))


def _verify(p: Any) -> None:
    from verifier.encode import Options, verify_proc
    from verifier.lang.ir import ir
    from verifier.results import Verdict

    if not isinstance(p, ir.Proc):
        _calls.append({"proc": repr(p)[:80], "verdict": "not-a-proc", "message": ""})
        raise TypeError(f"mkproc returned {type(p).__name__}, not a spork-verify proc")
    try:
        # lowering asks for early releases as --emit-cuda does (CG-R2: never a verdict)
        options = Options(timeout_s=_timeout(), releases=bool(os.environ.get(EMIT_ENV)))
        result = _verify_limited(p, lambda: verify_proc(p, options))
    except SporkError as e:
        _record_error(p.name, e)
        raise
    if result is None:  # past the wall-clock limit: no verdict, as a solver timeout
        limit = _proc_limit()
        _calls.append({"proc": p.name, "verdict": "unknown", "build": _building[0],
                       "message": f"unknown: the proof ran past the harness's {limit:g} s "
                                  "wall-clock limit per proc", "sizes": {}})
        raise SporkVerifyRejection(f"{p.name}: unknown (not verified): past {limit:g} s")
    text = "\n".join(f"{f.kind.value}: {f.message}" for f in result.findings)
    cex = result.findings[0].counterexample if result.findings else None
    first = result.findings[0] if result.findings else None
    _calls.append({"proc": p.name, "verdict": result.verdict.value, "message": text,
                   "build": _building[0], "sizes": dict(cex.sizes) if cex else {},
                   "codes": [f.code for f in result.findings],
                   "hazard": {"kind": first.kind.value, "variable": first.variable,
                              "free": f"@ free({first.variable}" in first.message,
                              "second": "SECOND ARRIVE @" in first.message,
                              "line": first.loc.line}
                   if first is not None else {},
                   **({"scheduled_by": dataclasses.asdict(_scheduled[id(p)])}
                      if id(p) in _scheduled else {})})
    if result.verdict is Verdict.proved and os.environ.get(EMIT_ENV):
        _emit(p, result.certificate)
    if result.verdict in (Verdict.rejected, Verdict.refuted):
        raise SporkVerifyRejection(f"{p.name}: {result.verdict.value}\n{text}")
    if result.verdict not in (Verdict.proved, Verdict.vacuous):  # vacuous: nothing to prove
        raise SporkVerifyRejection(f"{p.name}: {result.verdict.value} (not verified)\n{text}")


EMIT_ENV = "SPORK_CONFORMANCE_EMIT_CUDA"  # a folder: lower every proved proc there


def _emit(p: Any, cert: Any) -> None:
    """`emit_cuda` of a proved proc into $SPORK_CONFORMANCE_EMIT_CUDA (issue 18 item 6: every
    proc that is proved lowers); one JSON line per proc in its `emit.jsonl`, the test's file,
    the proc and `ok` or the message of the lowering's refusal."""
    from verifier.codegen import emit_cuda

    out = Path(os.environ[EMIT_ENV])
    out.mkdir(parents=True, exist_ok=True)
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
    try:
        (out / f"{p.name}.cu").write_text(emit_cuda(p, cert))
        status = "ok"
    except SporkError as e:
        status = e.render()
    except Exception as e:  # noqa: BLE001 - a crash of the lowering is listed, not raised
        status = f"crash: {type(e).__name__}: {e}"
    with open(out / "emit.jsonl", "a") as log:
        log.write(json.dumps({"test": test, "proc": p.name, "emit": status}) + "\n")


def _proc_limit() -> float:
    return float(os.environ.get("SPORK_CONFORMANCE_PROC_LIMIT", "0"))


def _verify_limited(p: Any, run: Callable[[], Any]) -> Any:
    """`run()` in a forked child ended after $SPORK_CONFORMANCE_PROC_LIMIT seconds (wall):
    the solver's own timeout bounds each query, not the time spent building and printing
    them, and one pathological proc must not stall the table. None when it ran past."""
    limit = _proc_limit()
    if limit <= 0:
        return run()
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child() -> None:
        # the debug log's entries the run adds (API-6) go back with its answer
        _debug_entries().clear()  # this forked copy's: the parent has them already
        try:
            value: tuple[str, Any] = ("ok", run())
        except BaseException as e:  # noqa: BLE001 - handed to the parent, raised there
            value = ("error", e)
        # remarks only: a proc need not pickle; the parent prints its own copy (inlined, as
        # the checks read it, CALL-1)
        send.send((*value, {key: remarks for key, (_, remarks) in _debug_entries().items()}))

    worker = ctx.Process(target=child, daemon=True)
    worker.start()
    send.close()
    try:
        if not receive.poll(limit):
            return None
        kind, value, entries = receive.recv()
        _merge_debug_entries(p, entries)
    except EOFError:
        kind, value = "error", RuntimeError(f"{p.name}: the verifying child died")
    finally:
        if worker.is_alive():
            worker.kill()
        worker.join()
    if kind == "error":
        raise value
    return value


def _debug_entries() -> dict[tuple[str, str], Any]:
    from verifier.lang.stdlib import debug_log

    return getattr(debug_log.get_global_debug_log(), "entries", {})


def _merge_debug_entries(p: Any, entries: dict[tuple[str, str], Any]) -> None:
    """The remarks a child verifying `p` logged, into this process's debug log (API-6)."""
    from verifier.lang.rewrite.inline import inline_calls
    from verifier.lang.stdlib import debug_log

    log = debug_log.get_global_debug_log()
    for (name, kind), passes in entries.items():
        for source, remarks in passes.items():
            log.log(name, kind, inline_calls(p), remarks, source)


def _record_error(name: str, e: SporkError) -> None:
    from verifier.diagnostics import RejectedInput

    verdict = "rejected" if isinstance(e, RejectedInput) else "unsupported"
    _calls.append({"proc": name, "verdict": verdict, "message": e.render(),
                   "codes": [e.code or ""]})


def _source_text(v: Any, scope: dict[str, Any]) -> str:
    """A keyword argument as upstream's test module would spell it: the name of the module
    global it is (a test's own config object), else `cuda_in_order`, `Sm90_SmemSwizzled(128)`,
    `2 * cuda_thread`, `4`; so the proc can be rebuilt under upstream."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_source_text(x, scope) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner},)"
    return next((k for k, g in scope.items() if g is v and not k.startswith("_")), str(v))


# How the proc being verified was built: {"mkproc": name, "kwargs": {name: source text}}, so
# upstream_conformance.py can rebuild it under upstream and run upstream's own sync_check.
_building: list[dict[str, Any] | None] = [None]


_in_build = [0]  # inside `_build`: it rebuilds the whole mkproc under upstream itself


def _build(mkproc: Callable[..., Any], kwargs: dict[str, Any]) -> list[Any]:
    _building[0] = {"mkproc": getattr(mkproc, "__name__", "?"),
                    "kwargs": {k: _source_text(v, getattr(mkproc, "__globals__", {}))
                               for k, v in kwargs.items()}}
    try:
        _in_build[0] += 1
        procs = mkproc(**kwargs)
    except SporkError as e:
        if not needs_exo_gpu(e) or not os.environ.get(EXO_GPU_ENV):
            _record_error(getattr(e, "proc", None) or mkproc.__name__, e)
            raise
        return _built_by_exo_gpu(mkproc, _building[0]["kwargs"])
    finally:
        _in_build[0] -= 1
    return list(procs) if isinstance(procs, (list, tuple)) else [procs]


EXO_GPU_ENV = "SPORK_CONFORMANCE_EXO_GPU_PYTHON"
_scheduled: dict[int, Any] = {}  # id(proc) -> ScheduledBy, for procs upstream's rewrites built


def _built_by_exo_gpu(mkproc: Callable[..., Any], kwargs_text: dict[str, str]) -> list[Any]:
    """The procs `mkproc(**kwargs)` returns when the test module runs under upstream Exo-GPU
    (SCHED-2): the test file is run in $SPORK_CONFORMANCE_EXO_GPU_PYTHON, the call evaluated
    in its namespace, and the procs upstream prints are parsed by spork-verify's front end,
    exactly as `spork-verify --exo-gpu-python` does for a file's module-level procs."""
    call = f"{_reach(mkproc)}({', '.join(f'{k}={v}' for k, v in kwargs_text.items())})"
    return _built_by_exo_gpu_call(mkproc.__code__.co_filename, call, mkproc.__name__)


def _reach(mkproc: Callable[..., Any]) -> str:
    """An expression naming `mkproc` in the test module's namespace: its name, or, for a
    function a test defines inside itself (`def test_x(...): def mkproc(): ...`) that reads
    no variable of the test's, the function rebuilt from its code object, which is a constant
    of the enclosing function's code."""
    outer, *inner = mkproc.__qualname__.split(".<locals>.")
    if not inner or mkproc.__code__.co_freevars or mkproc.__defaults__ or "." in outer:
        return mkproc.__name__
    code = f"{outer}.__code__"
    for name in inner:
        code = f"next(c for c in {code}.co_consts if getattr(c, 'co_name', '') == {name!r})"
    return f"__import__('types').FunctionType({code}, globals())"


_upstream_built: dict[tuple[str, str], Any] = {}  # (file, call) -> what upstream built


def _built_by_exo_gpu_call(path: str, call: str, name: str) -> list[Any]:
    """The procs `call` (an expression over the names of the test file `path`) returns when
    the file runs under upstream Exo-GPU (SCHED-2); one build per call and file."""
    from verifier.load.load_scheduled import load_by_exo_gpu

    loaded = _upstream_built.get((path, call))
    if loaded is None:
        loaded = load_by_exo_gpu(path, os.environ[EXO_GPU_ENV], _proc_limit() or 300.0, call)
        _upstream_built[(path, call)] = loaded
    if loaded.error is not None:
        _record_error(loaded.error.proc or name, loaded.error)
        raise loaded.error
    _scheduled.update(zip(map(id, loaded.procs), loaded.scheduled_by))
    return list(loaded.procs)


class CTextOutOfScope(Exception):
    """The test goes on to inspect upstream's generated C/CUDA text (out of scope)."""


class GeneratedSources:
    """Stands for upstream's generated sources: the procs were accepted; reading the text
    raises CTextOutOfScope (classified as the same outcome, with that note)."""

    def __getattr__(self, name: str) -> Any:
        raise CTextOutOfScope(f"{name}: upstream's generated C text is not compared")


class VerifyingCompiler:
    """The part of upstream's `compiler` fixture that tests/cuda calls without a GPU. Its
    `workdir` is the test's debug-log folder while the test runs, as upstream's (API-6)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    def cuda_cpu_test(self, mkproc: Callable[..., Any], golden: Any = None, sm: Any = None,
                      **kwargs: Any) -> GeneratedSources:
        for p in _build(mkproc, kwargs):
            _verify(p)
        return GeneratedSources()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        pytest.skip(f"{GPU_ONLY}: compiler.{name} builds or runs CUDA code")


@pytest.fixture
def compiler(tmp_path: Path) -> Any:
    from verifier.lang.stdlib import debug_log

    _compiler_fixtures[0] += 1
    before = debug_log.get_global_debug_log_path()
    debug_log.set_global_debug_log_path(tmp_path)
    yield VerifyingCompiler(tmp_path)
    debug_log.set_global_debug_log_path(before)
    _compiler_fixtures[0] -= 1


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A test that opens a debug-log file of a remark kind spork-verify does not write (API-6),
    or that stops at a name spork-verify does not serve outside the compiler fixture (its own
    helper building a proc), ends `unsupported` naming it, not as a failure of its own."""
    from verifier.diagnostics import Unsupported
    from verifier.lang.stdlib import debug_log

    yield
    error = call.excinfo.value if call.excinfo is not None else None
    if call.when != "call" or error is None:
        return
    if isinstance(error, FileNotFoundError) and error.filename:
        why = debug_log.missing(error.filename)
        if why is not None:
            _calls.append({"proc": Path(error.filename).name, "verdict": "unsupported",
                           "message": why})
    elif isinstance(error, Unsupported) and not any(c["verdict"] == "unsupported"
                                                    for c in _calls):
        _calls.append({"proc": error.proc or "?", "verdict": "unsupported",
                       "message": error.render()})


@pytest.fixture
def compiler_Sm80() -> None:
    pytest.skip(f"{GPU_ONLY}: compiler_Sm80 runs kernels on an sm_80 device")


@pytest.fixture
def compiler_Sm90a() -> None:
    pytest.skip(f"{GPU_ONLY}: compiler_Sm90a runs kernels on an sm_90a device")


class RemarkGolden:
    """Upstream's `golden` as the remark tests use it: `golden == text` of a debug-log file the
    test read. Generated C is out of scope (never compared); a remark file spork-verify wrote
    (API-6) is compared byte for byte with upstream's golden file, as upstream's test does, and
    where they differ the test ends `unsupported`, naming the remark and what of upstream's
    golden spork-verify's analysis does not have."""

    def __init__(self, workdir: Path, golden: Path) -> None:
        self.workdir, self.golden = workdir, golden

    def __eq__(self, other: object) -> bool:
        written = [f for f in sorted((self.workdir / "debug").glob("*.py"))
                   if isinstance(other, str) and f.read_text() == other]
        if not written:
            return False  # not a remark file spork-verify wrote (C text: never produced)
        theirs = self.golden.read_text() if self.golden.exists() else None
        if theirs == other:
            return True
        _calls.append({"proc": written[0].name, "verdict": "unsupported",
                       "message": remark_difference(written[0].name, other, theirs)})
        return False

    __hash__ = None  # type: ignore[assignment]


def remark_difference(name: str, ours: str, theirs: str | None) -> str:
    """Why remark file `name` (text `ours`) is not upstream's golden `theirs`: what upstream's
    golden holds that spork-verify's analysis does not, first (the table shows 150 characters),
    and how many of our remark lines are lines of it."""
    kind = name.rsplit("-", 1)[-1].removesuffix(".py")
    if theirs is None:
        return (f"not supported by spork-verify: upstream's golden `{kind}` remark ({name}) is "
                "not in the checkout (specs/upstream_api.md API-6)")
    remarks = [line.strip() for line in ours.splitlines() if line.strip().startswith("# ")]
    golden_lines = {line.strip() for line in theirs.splitlines()}
    same = sum(line in golden_lines for line in remarks)
    holds = [what for what, found in (
        ("VisRecord traces", "VisRecord" in theirs),
        ("stmt ids (s40)", re.search(r":\(s\d+\)", theirs) is not None),
        ("expr ids (e8)", re.search(r"\(e\d+\)", theirs) is not None),
        ("pow2 align", "pow2 align" in theirs)) if found] + ["its printer's layout"]
    return (f"not supported by spork-verify: remark `{kind}` vs upstream's golden, byte for "
            f"byte: {same}/{len(remarks)} of our lines are in it; it also holds "
            f"{', '.join(holds)} ({name}: spork-verify writes it from its own analysis, "
            "specs/upstream_api.md API-6)")


@pytest.fixture
def golden(request: pytest.FixtureRequest, tmp_path: Path) -> RemarkGolden:
    checkout = Path(os.environ.get("SPORK_UPSTREAM_CHECKOUT", "."))
    return RemarkGolden(tmp_path, checkout / "tests" / "golden" / "cuda" /
                        Path(str(request.fspath)).stem / f"{request.node.name}.txt")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _calls.clear()


def pytest_collectreport(report: pytest.CollectReport) -> None:
    log = os.environ.get("SPORK_CONFORMANCE_LOG")
    if not log or not report.failed:
        return
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"nodeid": report.nodeid, "when": "collect", "outcome": "failed",
                            "longrepr": str(report.longrepr)[-4000:], "calls": []}) + "\n")


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
