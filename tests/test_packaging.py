"""spork-verify is on no package index, so the install commands the docs give must work from a
clone or a built wheel (issue 19): `pip install -e '.[cvc5]'`, and `pip wheel --no-deps .`
followed by `pip install 'spork_verify-VERSION-py3-none-any.whl[cvc5]'`. The wheel route is
run here offline (pip never reaches an index), and `--recheck cvc5` works from what it installed.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
OFFLINE = ["--no-index", "--disable-pip-version-check", "--quiet"]


def _can_build_offline() -> bool:
    """setuptools builds a wheel without downloading only with `wheel` (test extras) or a
    setuptools that has bdist_wheel itself (70.1 and later)."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    import setuptools
    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    return importlib.util.find_spec("wheel") is not None or (major, minor) >= (70, 1)


@pytest.mark.slow  # builds a wheel and installs it into a fresh venv: .ci/run runs it
@pytest.mark.skipif(importlib.util.find_spec("cvc5") is None,
                    reason="cvc5 is not installed here (the extra cvc5)")
@pytest.mark.skipif(not _can_build_offline(),
                    reason="building a wheel offline needs the package wheel (the test extras)")
def test_wheel_route_installs_the_cvc5_extra_offline(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copytree(ROOT / "verifier", source / "verifier",
                    ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", *OFFLINE, "--no-deps",
                    "--no-build-isolation", "-w", str(dist), str(source)], check=True,
                   cwd=tmp_path)
    (wheel,) = dist.glob("spork_verify-*-py3-none-any.whl")
    assert wheel.name == f"spork_verify-{PROJECT['version']}-py3-none-any.whl"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    python = venv / "bin" / "python"
    # the documented command, extras and all; every dependency is already installed here
    subprocess.run([str(python), "-m", "pip", "install", *OFFLINE, f"{wheel}[cvc5]"],
                   check=True, cwd=tmp_path)
    done = subprocess.run([str(venv / "bin" / "spork-verify"), "--recheck", "cvc5", "--no-cache",
                           "--no-progress", str(EXAMPLES / "saxpy.py")], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"saxpy: PROVED \(.*cvc5-[\d.]+ agrees on (\d+)/\1;", done.stdout), done.stdout
    where = subprocess.run([str(python), "-P", "-c", "import verifier; print(verifier.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert where.startswith(str(venv)), where


# `pip install [options] spork-verify` or `'spork-verify[extra]'`: a name for an index to find
_UNINSTALLABLE = re.compile(r"pip install(?:\s+-[-\w]+)*\s+['\"]?spork-verify(?:\[[^\]]*\])?['\"]?"
                            r"(?=[\s`'\"]|$)", re.M)


def test_no_doc_or_message_advises_an_index_install() -> None:
    """`pip install spork-verify` or `'spork-verify[cvc5]'` would ask an index for a package
    that is not there."""
    texts = [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("specs/*.md"),
             *ROOT.glob("verifier/**/*.py"), *ROOT.glob("proofs/*.py"), ROOT / "action.yml",
             *ROOT.glob("docs/ci/*.yml")]
    for path in texts:
        text = path.read_text(encoding="utf-8")
        assert "spork-verify[cvc5]" not in text, path
        assert not _UNINSTALLABLE.search(text), (path, _UNINSTALLABLE.search(text))
