"""Shared test helpers: loading kernels and reading their `# expect:` headers."""

from __future__ import annotations

import atexit
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.semantics import sync_check as _sync_check

# The CLI's proof cache (CLI-7) goes to a folder of this test run, never the user's cache
# (child processes inherit it); answers are the same either way, this only keeps runs apart.
os.environ.setdefault("SPORK_VERIFY_CACHE_DIR", tempfile.mkdtemp(prefix="spork-verify-cache-"))
# ... and its key (SEC-7) to a file of this run, outside that folder
os.environ.setdefault("SPORK_VERIFY_KEY_FILE", os.path.join(
    tempfile.mkdtemp(prefix="spork-verify-key-"), "cache.key"))

_sync_check.install()  # `p.sync_check(...)` in files loaded in-process (API-3)


def _share_bytecode() -> None:
    """Child interpreters (the CLI, its loading children, xdist workers) compile the verifier
    once per test run, not once each: where the environment forbids writing bytecode
    (PYTHONDONTWRITEBYTECODE, as on the CI machine), they write it to a folder of this run
    instead, never into the checkout or the installed package (issue 20: ~0.25 s CPU a child).
    This process keeps its own setting; a prefix the user set is kept."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        folder = tempfile.mkdtemp(prefix="spork-verify-pyc-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # after the xdist workers
        os.environ["PYTHONPYCACHEPREFIX"] = folder
        del os.environ["PYTHONDONTWRITEBYTECODE"]


_share_bytecode()

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PROGRAMS = ROOT / "tests" / "programs"
PROGRAMS_ASYNC = ROOT / "tests" / "programs_async"
PROGRAMS_NESTS = ROOT / "tests" / "programs_nests"
PROGRAMS_HOPPER = ROOT / "tests" / "programs_hopper"
PROGRAMS_TK = ROOT / "tests" / "programs_tk"  # ThunderKittens tiles and vectors (TK-*)
PROGRAMS_ENDGAME = ROOT / "tests" / "programs_endgame"
PROGRAMS_BLACKWELL = ROOT / "tests" / "programs_blackwell"

_EXPECT = re.compile(r"^#\s*expect:\s*(\S+)\s+(proved|refuted|rejected|unknown|unsupported|vacuous)"
                     r"(?:\s+(.*))?$")


@dataclass(frozen=True)
class Expectation:
    file: Path
    proc: str
    verdict: str
    kind: str | None = None  # RAW | WAR | WAW | out-of-bounds | ERR-xxx
    variable: str | None = None
    line: int | None = None
    slow: bool = False  # `# test: slow` in the file
    slow_differential: bool = False  # `# test: slow-differential`


def expectations(path: Path) -> list[Expectation]:
    out = []
    text = path.read_text()
    slow = "# test: slow " in text or "# test: slow\n" in text
    slow_diff = slow or "# test: slow-differential" in text
    for line in text.splitlines():
        m = _EXPECT.match(line.strip())
        if not m:
            continue
        rest = (m.group(3) or "").split()
        kind = rest[0] if rest else None
        variable = rest[1] if len(rest) > 1 else None
        lineno = int(rest[2]) if len(rest) > 2 and rest[2].isdigit() else None
        out.append(Expectation(path, m.group(1), m.group(2), kind, variable, lineno, slow,
                               slow_diff))
    return out


def kernel_files() -> list[Path]:
    files = sorted(EXAMPLES.glob("*.py")) + sorted(PROGRAMS.glob("*.py")) + \
        sorted(PROGRAMS_ASYNC.glob("*.py")) + sorted(PROGRAMS_NESTS.glob("*.py")) + \
        sorted(PROGRAMS_HOPPER.glob("*.py")) + sorted(PROGRAMS_TK.glob("*.py")) + \
        sorted(PROGRAMS_ENDGAME.glob("*.py")) + \
        sorted(PROGRAMS_BLACKWELL.glob("*.py"))
    return [f for f in files if expectations(f)]


def benchmark(name: str) -> Any:
    """The module benchmarks/NAME.py (its kernel generators), loaded once."""
    if name not in sys.modules:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


def load_one(path: Path, name: str) -> ir.Proc:
    for p in load_procs(path):
        if p.name == name:
            assert isinstance(p, ir.Proc), f"{name} failed to parse: {getattr(p, 'error', p)}"
            return p
    raise AssertionError(f"proc {name} not found in {path}")


@pytest.fixture
def debug_folder(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Upstream's debug log set to `tmp_path` for the test, restored after (API-6)."""
    from verifier.lang.stdlib import debug_log

    before = debug_log.get_global_debug_log_path()
    debug_log.set_global_debug_log_path(tmp_path)
    yield tmp_path
    debug_log.set_global_debug_log_path(before)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rule(id): the spec rule a test exercises")


from hypothesis import settings as _settings  # noqa: E402

_settings.register_profile("default", max_examples=60, deadline=None)
_settings.register_profile("long", max_examples=1500, deadline=None)
_settings.load_profile(__import__("os").environ.get("HYPOTHESIS_PROFILE", "default"))


def representatives(cases: list[Expectation], by_kind: bool = True) -> set[Expectation]:
    """Of each kernel folder (a feature area), one case per verdict and finding kind, the one
    in the shortest file (a proxy for the cheapest): what the default run keeps of a check of
    every kernel, the project's floor of one proved program and one seeded bug per kind and
    feature (issue 20); .ci/run checks every kernel. Without `by_kind`, one per verdict: for
    cross-checks of what test_examples already decides per kind."""
    best: dict[tuple[str, str, str | None], Expectation] = {}
    for e in cases:
        key = (e.file.parent.name, e.verdict, e.kind if by_kind else None)
        if key not in best or (e.file.stat().st_size, e.file.name, e.proc) < \
                (best[key].file.stat().st_size, best[key].file.name, best[key].proc):
            best[key] = e
    return set(best.values())


def case_params(cases: list[Expectation], differential: bool = False,
                sample: tuple[str, ...] = (),
                by_kind: bool = True) -> list:  # type: ignore[type-arg]
    """pytest params, marked slow where the file says so; of the verdicts in `sample`, every
    case but the `representatives` is marked `extended` (.ci/run runs it, the default run
    does not)."""
    slow = [e for e in cases if (e.slow_differential if differential else e.slow)]
    kept = representatives([e for e in cases if e not in slow and e.verdict in sample], by_kind)
    out = []
    for e in cases:
        marks = [pytest.mark.slow] if e in slow else \
            [] if e in kept or e.verdict not in sample else [pytest.mark.extended]
        out.append(pytest.param(e, marks=marks, id=f"{e.file.stem}:{e.proc}"))
    return out


Row = tuple[Any, ...]


def default_first(rows: list[Row], keep: int = 1,
                  ids: Callable[[Row], str] | None = None) -> list:  # type: ignore[type-arg]
    """pytest params (one tuple of argument values each) of one check on many inputs: the
    first `keep` run by default, the others are marked `extended` (.ci/run runs them;
    issue 20)."""
    return [pytest.param(*row, marks=[] if k < keep else [pytest.mark.extended],
                         id=None if ids is None else ids(row)) for k, row in enumerate(rows)]


# An upstream-style script's head: a CTA's threads write `tile` then read it reversed, with a
# Fence after the read loop only (RAW on tile at line 15 unless a test's tail fixes it); test
# files append their own scheduling calls (test_upstream_style, test_cursor_edits).
REVERSED_TILE_HEAD = """from __future__ import annotations
from exo import *
from exo.platforms.cuda import *
from exo.stdlib.scheduling import *

@proc
def k(n: size, x: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            tile: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                tile[t] = x[256 * blk + t]
            for t in cuda_threads(0, 256):
                x[256 * blk + t] = tile[255 - t]
            Fence(cuda_in_order, cuda_in_order)
"""
