"""The gate holds when the kernel file is the attacker (issue 19, specs/threat_model.md).

Each attack is a kernel file under tests/attacks/, written as an attacker would write it: a
racy kernel plus code that runs while it loads. Every one must end with a non-zero exit and the
kernel's true verdict (or, for a forged reply, an internal error), never `proved`. The runs are
separate processes (`python -c "... verifier.cli ..."`), with a cache folder and a cache key
of their own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import default_first
from verifier.load.sandbox import landlock_abi

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = ROOT / "tests" / "attacks"
RUN = "import sys; from verifier.cli import main; sys.exit(main(sys.argv[1:]))"
# The same, on a machine whose kernel offers Landlock ABI `argv[1]` (0: none): what a run on
# an older kernel does, simulated on this one.
RUN_AT_ABI = ("import sys; from verifier.load import load_isolated; "
              "from verifier.results import Isolation; import verifier.cli as c, "
              "verifier.cli_gate as g; at = lambda: Isolation(int(sys.argv[1])); "
              "load_isolated.isolation = g.isolation = c.isolation = at; "
              "sys.exit(c.main(sys.argv[2:]))")

needs_landlock = pytest.mark.skipif(landlock_abi() < 1, reason="this kernel offers no Landlock "
                                    "(Linux >= 5.13 with landlock among its LSMs)")
needs_linux = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="process confinement is Linux only")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "SPORK_VERIFY_CACHE_DIR": str(tmp_path / "cache"),
            "SPORK_VERIFY_KEY_FILE": str(tmp_path / "state" / "cache.key")}


def spork(env: dict[str, str], *args: object, python: str = sys.executable,
          abi: int | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    code = [RUN] if abi is None else [RUN_AT_ABI, str(abi)]
    return subprocess.run([python, "-c", *code, *map(str, args)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, start_new_session=True)


def line_of(path: Path, text: str) -> int:
    return next(i for i, s in enumerate(path.read_text().splitlines(), 1) if text in s)


def assert_refuted(run: subprocess.CompletedProcess[str], attack: str, proc: str) -> None:
    path = ATTACKS / attack
    line = line_of(path, "y[256 * blk + t] = tile[255 - t]")
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{proc}: REFUTED" in run.stdout and "PROVED" not in run.stdout, run.stdout
    assert f"{path.relative_to(ROOT)}:{line}:36: RAW[ERR-V01]: RAW HAZARD @ tile[255]" \
        in run.stdout, run.stdout


@needs_landlock
@pytest.mark.extended  # .ci/run runs it; the default run leaves it out for time (issue 20)
@pytest.mark.rule("SEC-2", "SEC-7")
def test_cache_self_poisoning(env: dict[str, str], tmp_path: Path) -> None:
    """The file proves itself into the cache and flips its answers to `proved` while it loads:
    it can write nothing there and cannot read the key, so every run stays refuted, no CUDA is
    written, and the entries in the cache are the verifier's own."""
    for _ in range(2):  # the second run would read what the first one's file wrote
        assert_refuted(spork(env, ATTACKS / "cache_poison.py"), "cache_poison.py",
                       "cache_poisoned")
    run = spork(env, ATTACKS / "cache_poison.py", "--emit-cuda", tmp_path / "cu")
    assert_refuted(run, "cache_poison.py", "cache_poisoned")
    assert not list((tmp_path / "cu").glob("*.cu"))
    entries = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("*.json")]
    assert entries and all("mac" in e and "checksum" not in e for e in entries)
    assert any(e["payload"]["status"] == "candidate" for e in entries)


# What an attacker outside spork-verify runs (another CI step of their branch) to poison a
# cache folder: the racy kernel's answers, all `proved`, authenticated with KEY; with OUT.cu,
# it also writes the "certified" CUDA a proof from those answers gives. A process of its own,
# as the queries' text depends on what the process parsed before.
POISON = """
import sys
from pathlib import Path
from verifier.codegen import emit_cuda
from verifier.encode import Options, verify_proc
from verifier.encode.discharge import clear_cache
from verifier.encode.proof_cache import ProofCache
from verifier.encode.solver import Answer, Status
from verifier.load.load import load_procs
root, key, kernel = Path(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3]
(proc,) = load_procs(kernel)
verify_proc(proc, Options(cache_dir=root, cache_key=key))
cache = ProofCache(root, key)
for path in root.rglob("*.json"):
    cache.put(path.stem, Answer(Status.proved, "", {}, 1))
clear_cache()
result = verify_proc(proc, Options(cache_dir=root, cache_key=key))
assert result.verdict.value == "proved", result.verdict
if len(sys.argv) > 4:
    Path(sys.argv[4]).write_text(emit_cuda(proc, result.certificate))
"""


def _poisoned_cache(root: Path, key: bytes, kernel: Path, cuda: Path | None = None) -> None:
    subprocess.run([sys.executable, "-c", POISON, str(root), key.hex(), str(kernel),
                    *([str(cuda)] if cuda else [])], check=True, cwd=ROOT)


@needs_landlock
@pytest.mark.extended  # .ci/run runs it; the default run leaves it out for time (issue 20)
@pytest.mark.rule("SEC-7", "CLI-12")
def test_shared_ci_cache(env: dict[str, str], tmp_path: Path) -> None:
    """A cache folder written by someone else: entries under another key are ignored; entries
    under this user's own key (an attacker who can read it: a shared runner) are believed by
    the default mode and never read by --ci / --cache-mode private."""
    racy = ATTACKS / "racy_assume.py"
    cache = Path(env["SPORK_VERIFY_CACHE_DIR"])
    _poisoned_cache(cache, b"an attacker's own key", racy)
    assert_refuted(spork(env, racy), "racy_assume.py", "racy_assume")
    shutil.rmtree(cache)
    from verifier.encode.proof_cache import load_key

    _poisoned_cache(cache, load_key(Path(env["SPORK_VERIFY_KEY_FILE"])), racy)
    believed = spork(env, racy)
    assert believed.returncode == 0 and "PROVED" in believed.stdout, believed.stdout
    for mode in (["--ci"], ["--cache-mode", "private"], ["--no-cache"]):
        assert_refuted(spork(env, racy, *mode), "racy_assume.py", "racy_assume")


@needs_landlock
@pytest.mark.rule("SEC-7", "CLI-9")
def test_certificate_from_a_poisoned_cache_is_not_accepted(env: dict[str, str],
                                                          tmp_path: Path) -> None:
    """A certificate of the racy kernel, emitted from answers an attacker poisoned under a key
    of theirs: --check-cert re-runs the proof under this user's key and fails (exit 5)."""
    racy = ATTACKS / "racy_assume.py"
    forged = tmp_path / "racy_assume.cu"
    _poisoned_cache(tmp_path / "attacker-cache", b"an attacker's own key", racy, forged)
    assert "spork-verify-certificate" in forged.read_text()
    for mode in ([], ["--ci"]):
        run = spork(env, "--check-cert", forged, racy, *mode)
        assert run.returncode == 5 and "not proved" in run.stdout, run.stdout + run.stderr


@pytest.mark.rule("SEC-1", "LOAD-9")
def test_reply_cannot_run_code_in_the_verifier(env: dict[str, str]) -> None:
    """The file's own reply encoder sends a pickle that calls `eval` in the verifier: the
    reply names builtins.eval, which is not IR, so it is refused (exit 4), never run."""
    run = spork(env, ATTACKS / "reply_eval.py")
    assert run.returncode == 4, run.stdout + run.stderr
    assert "names builtins.eval, which is not part of spork-verify's IR" in run.stdout
    assert "REFUTED" not in run.stdout and "PROVED" not in run.stdout


@needs_landlock
@pytest.mark.extended  # .ci/run runs it; the default run leaves it out for time (issue 20)
@pytest.mark.rule("SEC-2")
def test_installed_package_and_site_packages_stay_unwritten(tmp_path: Path,
                                                           env: dict[str, str]) -> None:
    """In a throwaway environment with its own copy of the package: the file appends to the
    package's cli.py and drops a .pth into site-packages. Neither write happens, and a later
    run of a racy kernel is still refuted."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    shutil.copytree(ROOT / "verifier", site / "verifier",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = (site / "verifier" / "cli.py").read_text()
    installed = subprocess.run([python, "-c", "import verifier; print(verifier.__file__)"],
                               cwd=tmp_path, capture_output=True, text=True, check=True)
    assert installed.stdout.strip() == str(site / "verifier" / "__init__.py")
    run = spork(env, ATTACKS / "package_write.py", python=python)
    assert_refuted(run, "package_write.py", "package_write")
    assert (site / "verifier" / "cli.py").read_text() == before
    assert not (site / "spork_attack.pth").exists()
    assert not (site / "spork_attack_marker").exists()
    assert_refuted(spork(env, ATTACKS / "racy_assume.py", python=python), "racy_assume.py",
                   "racy_assume")
    assert sysconfig.get_paths()["purelib"] != str(site)  # the test's own Python untouched


@needs_linux
@pytest.mark.rule("SEC-4", "LOAD-6")
def test_setsid_grandchild_is_gone_when_the_run_ends(env: dict[str, str]) -> None:
    """The file starts a grandchild in a session of its own and prints its pid: once the run
    has exited, no process has that pid (the loader's subreaper killed it)."""
    run = spork(env, ATTACKS / "setsid_survivor.py", "--format", "json")
    doc = json.loads(run.stdout)
    (result,) = doc["results"]
    assert run.returncode == 1 and result["verdict"] == "refuted", run.stdout
    words = result["load_output"].split()
    pid = int(words[words.index("pid") + 1])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@needs_linux
@pytest.mark.rule("SEC-5")
@pytest.mark.parametrize("abi", default_first([(None,), (5,), (0,)]),
                         ids=["this-kernel", "abi-5", "no-landlock"])
def test_sigstop_to_the_verifier_does_not_hang_it(env: dict[str, str], abi: int | None
                                                  ) -> None:
    """The file sends SIGSTOP to the loader and to the CLI: refused (Landlock's signal scope
    from ABI 6; the seccomp filter below that and without Landlock), the run ends refuted."""
    if abi is None and landlock_abi() < 1:
        pytest.skip("this kernel offers no Landlock")
    run = spork(env, ATTACKS / "stop_parent.py", "-v", abi=abi, timeout=120)
    assert_refuted(run, "stop_parent.py", "stop_parent")
    assert "could not stop" in run.stdout and "| stopped" not in run.stdout, run.stdout


@pytest.mark.rule("CLI-11", "VAC-1", "VAC-2")
def test_assumed_sizes_that_run_nothing_are_vacuous_as_the_assert(env: dict[str, str],
                                                                  tmp_path: Path) -> None:
    """`--assume n=0` on a racy kernel runs no task: vacuous (exit 3), exactly what the same
    kernel with `assert n == 0` gives; a value the asserts exclude is vacuous too, and a size
    that runs is refuted."""
    racy = ATTACKS / "racy_assume.py"
    assumed = spork(env, racy, "--assume", "n=0")
    asserted_file = tmp_path / "racy_assert.py"
    asserted_file.write_text(racy.read_text().replace(
        "    assert n % 256 == 0\n", "    assert n == 0\n    assert n % 256 == 0\n"))
    asserted = spork(env, asserted_file)
    for run in (assumed, asserted):
        assert run.returncode == 3 and "VACUOUS" in run.stdout and "ERR-V12" in run.stdout, \
            run.stdout
        assert "no statement of proc racy_assume executes" in run.stdout, run.stdout
    excluded = spork(env, racy, "--assume", "n=5")
    assert excluded.returncode == 3 and "VACUOUS with n = 5" in excluded.stdout, excluded.stdout
    assert f"{racy.relative_to(ROOT)}:{line_of(racy, 'assert n % 256')}:" in excluded.stdout
    assert spork(env, racy, "--assume", "n=256").returncode == 1
