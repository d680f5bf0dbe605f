"""The loading child's confinement and the proof cache's key (specs/threat_model.md SEC-1..7):
what a confined process can and cannot do, the key's file, runs without Landlock, `--ci`."""

from __future__ import annotations

import io
import json
import os
import pickle
import resource
import socket
import stat
import sys
from pathlib import Path
from typing import Callable

import pytest

from verifier.encode.proof_cache import KEY_BYTES, KeyUnavailable, ProofCache, load_key
from verifier.encode.solver import Answer, Status
from verifier.load import sandbox
from verifier.load.load_protocol import _ReplyUnpickler
from verifier.results import Isolation

from conftest import EXAMPLES

needs_landlock = pytest.mark.skipif(sandbox.landlock_abi() < 1, reason="this kernel offers "
                                    "no Landlock (Linux >= 5.13 with landlock among its LSMs)")


def _in_confined_child(policy: sandbox.Policy, probes: dict[str, Callable[[], object]]
                       ) -> dict[str, str]:
    """Run each probe in a forked, confined child; 'ok' or the error it raised."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: confine, probe, report, never return into pytest
        os.close(read)
        out = {}
        try:
            sandbox.confine(policy)
            for name, probe in probes.items():
                try:
                    probe()
                    out[name] = "ok"
                except OSError as e:
                    out[name] = type(e).__name__
        except BaseException as e:  # noqa: BLE001
            out["confine"] = repr(e)
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return json.loads(text)


@needs_landlock
@pytest.mark.rule("SEC-2", "SEC-3", "SEC-5")
def test_confined_process(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir()
    secret = tmp_path / "state" / "cache.key"
    secret.parent.mkdir()
    secret.write_bytes(b"k" * KEY_BYTES)
    outside = tmp_path / "outside.txt"
    parent = os.getpid()
    probes: dict[str, Callable[[], object]] = {
        "write private": lambda: (private / "x").write_text("x"),
        "write outside": lambda: outside.write_text("x"),
        "write the verifier": lambda: open(sandbox.__file__, "a").close(),
        "read the verifier": lambda: Path(sandbox.__file__).read_text(),
        "read the key": lambda: secret.read_bytes(),
        "list the key's folder": lambda: os.listdir(secret.parent),
        "link the key into private": lambda: os.link(secret, private / "k"),
        "read parent environ": lambda: Path(f"/proc/{parent}/environ").read_bytes(),
        "read parent memory": lambda: open(f"/proc/{parent}/mem", "rb").close(),
        "signal parent": lambda: os.kill(parent, 0),
        "prlimit parent": lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE),
        "unix socket": lambda: socket.socket(socket.AF_UNIX).close(),
        "chmod the verifier": lambda: os.chmod(sandbox.__file__, 0o666),
        "chmod in private": lambda: os.chmod(private, 0o700),
        "write /dev/null": lambda: Path("/dev/null").write_text("x"),
        "read /dev/urandom": lambda: open("/dev/urandom", "rb").read(4),
    }
    got = _in_confined_child(sandbox.Policy((str(private),), (str(secret),)), probes)
    allowed = {"write private", "read the verifier", "list the key's folder",
               "write /dev/null", "read /dev/urandom"}
    assert got == {name: "ok" if name in allowed else got[name] for name in probes}, got
    assert [name for name in probes if name not in allowed and got[name] == "ok"] == [], got
    assert not outside.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux only")
@pytest.mark.rule("SEC-3")
def test_the_verifier_is_not_dumpable() -> None:
    from verifier.load.load_isolated import load_isolated

    import ctypes

    load_isolated(EXAMPLES / "saxpy.py")
    assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE: 0 since the load


def test_readable_roots_leave_out_only_the_hidden_path(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    hidden = tmp_path / "b" / "key"
    hidden.write_text("k")
    (tmp_path / "b" / "other").write_text("o")
    (tmp_path / "link-to-b").symlink_to(tmp_path / "b")  # a rule would follow it to the key
    roots = sandbox.readable_roots((str(hidden),))
    assert str(tmp_path / "link-to-b") not in roots
    assert str(tmp_path / "a") in roots and str(tmp_path / "b" / "other") in roots
    covered = [r for r in roots if str(hidden) == r or str(hidden).startswith(r.rstrip("/") + "/")]
    assert not covered and "/" not in roots and "/dev" not in roots


@pytest.mark.rule("SEC-7")
def test_key_file(tmp_path: Path) -> None:
    path = tmp_path / "state" / "spork-verify" / "cache.key"
    key = load_key(path)
    assert len(key) == KEY_BYTES and load_key(path) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    path.chmod(0o644)  # others can read it: not a key any more
    with pytest.raises(KeyUnavailable, match="chmod 600"):
        load_key(path)


@pytest.mark.rule("SEC-7")
def test_entries_need_the_key(tmp_path: Path) -> None:
    answer = Answer(Status.proved, "", {}, 10)
    ProofCache(tmp_path, b"a" * KEY_BYTES).put("ab" * 32, answer)
    assert ProofCache(tmp_path, b"a" * KEY_BYTES).get("ab" * 32) == answer
    assert ProofCache(tmp_path, b"b" * KEY_BYTES).get("ab" * 32) is None
    path = next(tmp_path.rglob("*.json"))
    entry = json.loads(path.read_text())
    entry["mac"] = "0" * 64
    path.write_text(json.dumps(entry))
    assert ProofCache(tmp_path, b"a" * KEY_BYTES).get("ab" * 32) is None


@pytest.mark.rule("SEC-1")
@pytest.mark.parametrize("name", ["builtins eval", "os system", "verifier.load.load run_file",
                                  "verifier.cli exit_code", "copyreg _reconstructor"])
def test_the_reply_names_no_callable(name: str) -> None:
    module, attr = name.split()
    data = f"\x80\x04c{module}\n{attr}\n.".encode("latin-1")
    with pytest.raises(pickle.UnpicklingError, match="not part of spork-verify's IR"):
        _ReplyUnpickler(io.BytesIO(data)).load()


@pytest.mark.rule("SEC-1")
def test_the_reply_references_only_stdlib_values() -> None:
    for pid in [("verifier.load.load", "run_file"), ("verifier.lang.ir.ir", "Proc"),
                ("os", "system")]:
        data = b"\x80\x04" + pickle.dumps(pid, protocol=4)[2:-1] + b"Q."
        with pytest.raises(pickle.UnpicklingError):
            _ReplyUnpickler(io.BytesIO(data)).load()


def _without_landlock(monkeypatch: pytest.MonkeyPatch) -> None:
    import verifier.cli as cli
    import verifier.cli_gate as gate
    from verifier.load import load_isolated

    def none() -> Isolation:
        return Isolation(0)
    for module in (cli, gate, load_isolated):
        monkeypatch.setattr(module, "isolation", none)


@pytest.mark.rule("SEC-6", "CLI-12")
def test_without_landlock_nothing_is_stored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from verifier.cli import main

    monkeypatch.setenv("SPORK_VERIFY_CACHE_DIR", str(tmp_path / "cache"))
    _without_landlock(monkeypatch)
    saxpy = str(EXAMPLES / "saxpy.py")
    code = main([saxpy, "--emit-cuda", str(tmp_path / "cu"), "--format", "json"])
    out = capsys.readouterr()
    assert code == 3 and "no Landlock" in out.err and "no CUDA emitted" in out.err, out.err
    (result,) = json.loads(out.out)["results"]
    assert result["verdict"] == "proved"
    assert result["isolation"] == {"level": "none", "landlock_abi": 0}
    assert not list(tmp_path.rglob("*.json")) and not list(tmp_path.rglob("*.cu"))
    assert main(["--check-cert", str(tmp_path / "x.cu")]) == 2
    assert "no certificate is accepted here" in capsys.readouterr().err
    assert main([saxpy, "--ci"]) == 2
    assert "--ci" in capsys.readouterr().err


@needs_landlock
def test_isolation_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    from verifier.cli import main

    assert main([str(EXAMPLES / "saxpy.py"), "--format", "json", "--ci"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    level = "full" if sandbox.landlock_abi() >= sandbox.SIGNAL_SCOPE_ABI else "partial"
    assert result["isolation"] == {"level": level, "landlock_abi": sandbox.landlock_abi()}


def test_warnings_say_what_is_not_protected() -> None:
    assert Isolation(7).warning() == "" and Isolation(4).warning() == ""
    assert "signal other processes" in Isolation(4, syscall_filter=False).warning()
    assert "truncate" in Isolation(2).warning()
    assert "no Landlock" in Isolation(0).warning()
