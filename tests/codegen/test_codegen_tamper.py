"""`--check-cert` fails on any edit of an emitted file (specs/cli.md CLI-9, LANG-8.1): every
byte of one small kernel's file, and a deterministic sample of edits of the file of every
example expected to be proved, is found; the untouched file passes, and forgeries that keep the
file self-consistent are caught by re-emission and by the re-run proof.

The sampled files carry a hand-made certificate with the proc's own IR hash (the CUDA text does
not depend on the certificate's other fields), so the test does not re-run every proof; the
saxpy tests go through real proofs and the command line end to end."""

from __future__ import annotations

import contextlib
import hashlib
import io
import random
from pathlib import Path

import pytest
from codegen_support import certified, load, proved_cases

from verifier import __version__
from verifier.cli import main
from verifier.cli_cert import CERT_MISMATCH
from verifier.codegen import emit_cuda, proc_problems, read_emitted
from verifier.codegen.certificate import CUDA_PREFIX, SEAL_PREFIX
from verifier.encode.solver import SOLVER_NAME
from verifier.lang.ir.printer import ir_hash
from verifier.results import Certificate

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
PROVED = [(f, name) for f, name in proved_cases() if f.parent == EXAMPLES]
SAMPLE = 120  # edits per example besides saxpy


def _check(cu: Path, *source: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--check-cert", str(cu), *map(str, source)])
    return code, out.getvalue() + err.getvalue()


def _edits(data: bytes, positions: list[int]) -> list[tuple[str, bytes]]:
    """A changed byte at each position, and a deleted and an inserted one at every third."""
    out = []
    for i in positions:
        out.append((f"byte {i} changed", data[:i] + bytes([(data[i] + 1) % 256]) + data[i + 1:]))
        if i % 3 == 0:
            out.append((f"byte {i} deleted", data[:i] + data[i + 1:]))
            out.append((f"byte inserted at {i}", data[:i] + b" " + data[i:]))
    return out


def test_every_proved_example_is_covered() -> None:
    assert len(PROVED) >= 9 and any(name == "saxpy" for _, name in PROVED)


@pytest.mark.rule("LANG-8.1")
def test_every_byte_of_a_small_kernel(tmp_path: Path) -> None:
    """saxpy: each of its bytes changed (the header and the kernel body), every third one
    also deleted and duplicated: each edit is found, and the command line (every 50th edit)
    exits 5 naming a mismatch."""
    proc, cert = certified(EXAMPLES / "saxpy.py", "saxpy")
    data = emit_cuda(proc, cert).encode()
    edits = _edits(data, list(range(len(data))))
    cu = tmp_path / "saxpy.cu"
    for k, (what, tampered) in enumerate(edits):
        emitted, problems = read_emitted(tampered)
        assert problems, what
        if k % 50 == 0:
            cu.write_bytes(tampered)
            code, text = _check(cu)
            assert code == CERT_MISMATCH and "does not match its certificate" in text, what
    assert len(edits) > 3 * 4000 // 2


def _hand_certified(path: Path, name: str) -> tuple[object, bytes]:
    proc = load(path, name)
    cert = Certificate(name, ir_hash(proc), (("hand-made", "0" * 16),), SOLVER_NAME,
                       __version__)
    return proc, emit_cuda(proc, cert).encode()


@pytest.mark.rule("LANG-8.1")
@pytest.mark.parametrize("case", PROVED, ids=lambda c: c[1])
def test_sampled_edits_of_every_proved_example(case: tuple[Path, str]) -> None:
    proc, data = _hand_certified(*case)
    emitted, problems = read_emitted(data)
    assert emitted is not None and problems == [] and proc_problems(emitted, proc) == []
    body_at = data.index(SEAL_PREFIX.encode())
    rng = random.Random(case[1])  # deterministic: the same positions on every run
    positions = sorted(rng.sample(range(body_at, len(data)), SAMPLE) +
                       rng.sample(range(body_at), 12))
    for what, tampered in _edits(data, positions):
        emitted, problems = read_emitted(tampered)
        assert problems, f"{case[1]}: {what} went unnoticed"


def _reseal(text: str, body: str | None = None, cert_line: tuple[str, str] | None = None) -> str:
    """A forgery that keeps the file self-consistent: new body and/or certificate line, with
    the digest, CUDA and seal lines recomputed."""
    from verifier.codegen.certificate import certificate_header

    emitted, problems = read_emitted(text.encode())
    assert emitted is not None and not problems
    cert = emitted.cert
    if cert_line is not None:
        cert = Certificate.from_json(cert.to_json().replace(*cert_line))
    new_body = emitted.body if body is None else body
    return "\n".join(certificate_header(emitted.source, cert, new_body)) + "\n" + new_body


@pytest.mark.rule("LANG-8.1")
def test_untouched_file_passes_and_forgeries_fail(tmp_path: Path) -> None:
    source = EXAMPLES / "saxpy.py"
    proc, cert = certified(source, "saxpy")
    text = emit_cuda(proc, cert)
    cu = tmp_path / "saxpy.cu"
    cu.write_text(text)
    code, out = _check(cu, source)
    assert code == 0 and "matches" in out and "re-run proof" in out, out

    emitted, _ = read_emitted(text.encode())
    assert emitted is not None
    oob = emitted.body.replace("exo_1thr_t)]", "exo_1thr_t + 1)]", 1)
    assert oob != emitted.body
    cu.write_text(_reseal(text, body=oob))  # the out-of-bounds edit of the issue, resealed
    code, out = _check(cu, source)
    assert code == CERT_MISMATCH and "is not what spork-verify emits" in out, out

    ob_id, digest = cert.obligations[0]
    cu.write_text(_reseal(text, cert_line=(digest, "0" * 16)))  # a forged query hash
    code, out = _check(cu, source)
    assert code == CERT_MISMATCH and f"obligation {ob_id}" in out, out


def test_mismatch_names_what_differs(tmp_path: Path) -> None:
    proc, cert = certified(EXAMPLES / "saxpy.py", "saxpy")
    text = emit_cuda(proc, cert)
    cu = tmp_path / "saxpy.cu"
    cu.write_text(text.replace("exo_1thr_t)]", "exo_1thr_t + 1)]", 1))
    assert "CUDA text below the header changed" in _check(cu)[1]
    digest = hashlib.sha256(b"x").hexdigest()
    cu.write_text(text.replace(CUDA_PREFIX, CUDA_PREFIX[:-1] + digest[:1] + " ", 1))
    assert _check(cu)[0] == CERT_MISMATCH
    cu.write_text(text.replace("spork-verify-source", "spork-verify-sourcf", 1))
    code, out = _check(cu)
    assert code == CERT_MISMATCH and "missing, doubled or damaged" in out, out
