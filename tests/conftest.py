"""Shared test helpers: loading kernels and reading their `# expect:` headers."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def case_params(cases: list[Expectation], differential: bool = False) -> list:  # type: ignore[type-arg]
    """pytest params, marked slow where the file says so."""
    out = []
    for e in cases:
        marks = [pytest.mark.slow] if (e.slow_differential if differential else e.slow) else []
        out.append(pytest.param(e, marks=marks, id=f"{e.file.stem}:{e.proc}"))
    return out
