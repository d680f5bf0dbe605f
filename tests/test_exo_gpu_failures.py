"""Upstream's child in a build folder of its own, and upstream failures (specs/upstream_api.md
SCHED-7), with a stand-in for upstream: a tiny `exo` package whose `platforms.cuda` imports
and whose `fake_jit` module fails, hangs or reports where it runs, put on the path of our own
interpreter by a wrapper script. No upstream Exo-GPU is needed.

A user file imports `exo.fake_jit`, which spork-verify's loader does not serve (API-2), so the
file is run again under the stand-in (SCHED-2).
"""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from verifier.load.load_scheduled import ENV_VAR, JIT_ENV, build_folder

from process_support import stop_limit_s

ROOT = Path(__file__).resolve().parent.parent

FAKE_JIT = """\
import os, time

def build():
    raise RuntimeError("ninja: build stopped: subcommand failed")

def hang():
    while True:
        time.sleep(0.05)

def where(out):
    with open(out, "w") as f:
        f.write(repr((os.getcwd(), os.environ.get("CAMSPORK_JIT_DIR"))))
"""


def _fake_upstream(root: Path, cuda_module: str = "") -> Path:
    """An executable that runs our interpreter with the stand-in `exo` importable, its
    `exo.platforms.cuda` being `cuda_module`."""
    pkg = root / "site" / "exo"
    (pkg / "platforms").mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = 'stand-in'\n")
    (pkg / "platforms" / "__init__.py").write_text("")
    (pkg / "platforms" / "cuda.py").write_text(cuda_module)
    (pkg / "fake_jit.py").write_text(FAKE_JIT)
    wrapper = root / "python"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={root / 'site'} exec {sys.executable} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _fake_upstream(tmp_path_factory.mktemp("fake_upstream"))


def _run(tmp_path: Path, python: Path, body: str, *args: str
         ) -> tuple[subprocess.CompletedProcess[str], dict]:
    user = tmp_path / "kernel.py"
    user.write_text(textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env.pop("SPORK_VERIFY_CACHE_DIR", None)
    caller = tmp_path / "caller"
    caller.mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "verifier.cli", str(user), "--format", "json",
                           "--no-progress", "--exo-gpu-python", str(python), *args],
                          cwd=caller, env={**env, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=stop_limit_s(120.0))
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    return done, report


def _finding(report: dict) -> dict:
    (result,) = report["results"]
    (finding,) = result["findings"]
    return {**finding, "verdict": result["verdict"]}


@pytest.mark.rule("SCHED-7")
def test_an_exception_out_of_upstream_is_unsupported_naming_upstream(
        tmp_path: Path, upstream: Path) -> None:
    done, report = _run(tmp_path, upstream, """\
        import exo.fake_jit

        exo.fake_jit.build()
    """)
    assert done.returncode == 3, done.stdout + done.stderr
    finding = _finding(report)
    assert finding["verdict"] == "unsupported" and finding["rule"] == "SCHED-7"
    assert "upstream Exo-GPU" in finding["message"] and "ninja: build stopped" in finding["message"]
    assert "fake_jit.py:4" in finding["message"]  # where upstream raised it
    assert finding["location"]["line"] == 3  # the user's call


@pytest.mark.rule("SCHED-2", "LOAD-2")
def test_an_exception_of_the_users_own_code_stays_a_rejection(
        tmp_path: Path, upstream: Path) -> None:
    done, report = _run(tmp_path, upstream, """\
        import exo.fake_jit

        raise ValueError("the user's own mistake")
    """)
    assert done.returncode == 2, done.stdout + done.stderr
    finding = _finding(report)
    assert finding["verdict"] == "rejected" and "the user's own mistake" in finding["message"]
    assert finding["location"]["line"] == 3


@pytest.mark.rule("SCHED-7", "LOAD-7")
def test_a_hang_inside_upstream_is_unsupported_naming_where_it_was(
        tmp_path: Path, upstream: Path) -> None:
    # the limit counts the child's start-up too: stretched by the load per core, so that the
    # file reaches the hang before the limit ends it (LOAD-7)
    limit = math.ceil(stop_limit_s(4.0))
    done, report = _run(tmp_path, upstream, """\
        import exo.fake_jit

        exo.fake_jit.hang()
    """, "--load-timeout", str(limit))
    assert done.returncode == 3, done.stdout + done.stderr
    finding = _finding(report)
    assert finding["verdict"] == "unsupported" and finding["rule"] == "SCHED-7"
    assert f"did not finish within {limit} s" in finding["message"]
    assert "site/exo/fake_jit.py:" in finding["message"] and finding["location"]["line"] == 3


@pytest.mark.rule("SCHED-7", "LOAD-7")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_a_hang_importing_upstream_is_unsupported_not_a_rejection(tmp_path: Path) -> None:
    """A cold import of upstream's package that outlasts the limit (before the user's file
    ran) is upstream's failure: unsupported, never a rejection of the file."""
    slow = _fake_upstream(tmp_path / "slow_upstream",
                          "import time\nwhile True:\n    time.sleep(0.05)\n")
    done, report = _run(tmp_path, slow, """\
        import exo.fake_jit
    """, "--load-timeout", "4")
    assert done.returncode == 3, done.stdout + done.stderr
    finding = _finding(report)
    assert finding["verdict"] == "unsupported" and finding["rule"] == "SCHED-7"
    assert "upstream's import of exo.platforms.cuda" in finding["message"]


@pytest.mark.rule("SCHED-7")
def test_upstream_runs_in_a_private_folder_not_the_callers(tmp_path: Path,
                                                           upstream: Path) -> None:
    """The child works in a private folder with its own copy of the cached checker build
    (the JIT directory inside it), never in the caller's working folder."""
    done, report = _run(tmp_path, upstream, """\
        import os, exo.fake_jit

        print("WHERE", repr((os.getcwd(), os.environ.get("CAMSPORK_JIT_DIR"))))
        raise ValueError("stop here")
    """)
    (result,) = report["results"]
    line = next(x for x in result["load_output"].splitlines() if x.startswith("WHERE "))
    cwd, jit = eval(line.removeprefix("WHERE "))  # noqa: S307 - our own repr
    caller = tmp_path / "caller"
    assert Path(cwd) != caller and Path(jit).parent == Path(cwd) and Path(jit).name == "jit"
    assert not (caller / ".ninja_log").exists()
    folder = build_folder(str(upstream), {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    other = build_folder(str(tmp_path / "another" / "python"),
                         {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert folder.parent.name == "exo-gpu" and other != folder  # one cache per interpreter
    assert JIT_ENV == "CAMSPORK_JIT_DIR"


@pytest.mark.rule("SCHED-7")
@pytest.mark.parametrize("source_age, loaded", [(1000, True), (3000, False)])
def test_child_loads_the_copied_checker_when_current(tmp_path: Path, monkeypatch,
                                                     source_age: int, loaded: bool) -> None:
    """The child takes the checker library of its copy of the cache as it is when it is newer
    than every checker source (the copy has no ninja log for its paths, so upstream's JIT
    would rebuild it); an older one is left to the JIT."""
    import types

    from verifier.load import exo_gpu_child

    src = tmp_path / "lib"
    src.mkdir()
    (src / "exec.cpp").write_text("")
    lib = tmp_path / "jit" / "camspork" / "libcamspork.so"
    lib.parent.mkdir(parents=True)
    lib.write_text("")
    os.utime(src / "exec.cpp", (source_age, source_age))
    os.utime(lib, (2000, 2000))
    jit = types.ModuleType("exo.spork.camspork.jit")
    jit.get_libcamspork_path = lambda: str(lib)  # type: ignore[attr-defined]
    jit.get_src_path = lambda: str(src)  # type: ignore[attr-defined]
    jit.compile_libcamspork = lambda: "ninja ran"  # type: ignore[attr-defined]
    packages = {"exo": types.ModuleType("exo"), "exo.spork": types.ModuleType("exo.spork"),
                "exo.spork.camspork": types.ModuleType("exo.spork.camspork")}
    packages["exo.spork.camspork"].jit = jit  # type: ignore[attr-defined]
    for name, module in {**packages, "exo.spork.camspork.jit": jit}.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setenv(JIT_ENV, str(tmp_path / "jit"))
    exo_gpu_child._prebuilt_checker()
    assert jit.compile_libcamspork() == (str(lib) if loaded else "ninja ran")
