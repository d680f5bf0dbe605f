"""The CLI contract: exit codes, the JSON shape of architecture.md §4, located messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.cli import main

from conftest import EXAMPLES, ROOT

INPUTS = ROOT / "tests" / "inputs"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_proved_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, EXAMPLES / "smem_exchange.py")
    assert code == 0
    assert "smem_exchange: PROVED" in out


def test_refuted_exits_1_with_located_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / "smem_matmul_bug_nofence1.py"
    code, out, _ = run(capsys, path)
    assert code == 1
    first = next(line for line in out.splitlines() if "RAW" in line and "HAZARD" in line)
    assert first.startswith(f"{path}:") and "A_s" in first
    assert "earlier access:" in out and "replayed on the abstract machine: yes" in out
    assert "sizes K=16, M=16, N=16" in out


def test_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--format", "json", EXAMPLES / "smem_exchange_bug_nofence.py")
    assert code == 1
    doc = json.loads(out)
    assert doc["tool"] == "spork-verify" and doc["version"]
    (res,) = doc["results"]
    assert set(res) >= {"file", "proc", "verdict", "time_s", "obligations", "findings"}
    assert res["verdict"] == "refuted"
    for ob in res["obligations"]:
        assert set(ob) >= {"id", "rule", "kind", "status", "time_s"}
        assert ob["rule"].startswith("SEM-")
    (f,) = [f for f in res["findings"] if f["kind"] == "RAW"]
    assert f["variable"] == "tile"
    assert set(f["location"]) == {"file", "line", "col"}
    roles = {r["role"] for r in f["related"]}
    assert roles >= {"earlier access", "later access"}
    cex = f["counterexample"]
    assert cex["replayed"] is True and cex["sizes"]["n"] % 256 == 0 and cex["threads"]


def test_rejected_exits_2_with_location(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, INPUTS / "static_errors.py")
    assert code == 2
    assert f"{INPUTS / 'static_errors.py'}:7:13: collective[ERR-A21]" in out
    assert "not enough threads available" in out
    assert "static_errors.py: k3: REJECTED" in out


def test_parse_error_stops_the_file_at_the_bad_proc(capsys: pytest.CaptureFixture[str]) -> None:
    """@proc raises at decoration time, as upstream does: the file stops there (LOAD-3)."""
    path = INPUTS / "parse_error_then_good_proc.py"
    code, out, _ = run(capsys, path)
    assert code == 2
    assert f"{path}: k2: REJECTED" in out and f"{path}:8:31: static[ERR-P05]" in out
    assert "unknown name tt" in out and ": good:" not in out
    code, out, _ = run(capsys, INPUTS / "bad_blockdim.py")
    assert code == 2 and "bad_blockdim.py: k3: REJECTED" in out
    assert "blockDim=250 must be a positive multiple of 32" in out


def test_python_syntax_error_is_located(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, INPUTS / "syntax_error.py")
    assert code == 2
    assert f"{INPUTS / 'syntax_error.py'}:3:" in out and "syntax error" in out


def test_missing_file_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, INPUTS / "no_such_file.py")[0] == 2
    assert run(capsys)[0] == 2
    assert run(capsys, "--sizes", "n=x", EXAMPLES / "saxpy.py")[0] == 2


def test_unsupported_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, INPUTS / "unsupported_program.py")
    assert code == 3
    assert "UNSUPPORTED" in out and "ERR-V11" in out


def test_concrete_mode(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--sizes", "n=512", EXAMPLES / "smem_exchange_bug_nofence.py")
    assert code == 1 and "sizes n=512" in out
    code, _, _ = run(capsys, "--sizes", "n=512", EXAMPLES / "smem_exchange.py")
    assert code == 0


def test_proc_filter_and_output_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "report.json"
    code, _, _ = run(capsys, "--proc", "k3", "--format", "json", "--output", out_file,
                     INPUTS / "static_errors.py")
    assert code == 2
    doc = json.loads(out_file.read_text())
    assert [r["proc"] for r in doc["results"]] == ["k3"]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and "spork-verify" in out


def test_commit_group_program_is_proved(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, INPUTS / "barrier_program.py")
    assert code == 0, out


def test_emit_cuda_only_for_proved_and_check_cert(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    out_dir = tmp_path / "cu"
    code, _, _ = run(capsys, "--emit-cuda", out_dir, EXAMPLES / "smem_exchange.py",
                     EXAMPLES / "smem_exchange_bug_nofence.py")
    assert code == 1  # one refuted
    assert sorted(p.name for p in out_dir.iterdir()) == ["smem_exchange.cu"]
    cu = out_dir / "smem_exchange.cu"
    assert "spork-verify-certificate:" in cu.read_text()
    code, out, _ = run(capsys, "--check-cert", cu, EXAMPLES / "smem_exchange.py")
    assert code == 0 and "matches" in out
    code, out, _ = run(capsys, "--check-cert", cu, EXAMPLES / "smem_exchange_bug_nofence.py")
    assert code == 2  # no proc of that name there: the wrong source, not an edit
    cu.write_text(cu.read_text() + "__device__ int appended;\n")
    code, out, _ = run(capsys, "--check-cert", cu)  # the source path read from the header
    assert code == 5 and "does not match its certificate" in out, out


def test_proved_but_not_lowered_exits_3_without_traceback(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A proof that codegen cannot lower: located message, exit 3, no `.cu`, no traceback."""
    import verifier.codegen as codegen
    from verifier.diagnostics import SrcLoc, Unsupported

    def refuse(proc, cert):  # type: ignore[no-untyped-def]
        raise Unsupported("not lowered here", SrcLoc(str(EXAMPLES / "saxpy.py"), 9, 5),
                          code="ERR-V11")

    monkeypatch.setattr(codegen, "emit_cuda", refuse)
    code = main([str(EXAMPLES / "saxpy.py"), "--emit-cuda", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 3
    assert "no CUDA emitted for saxpy" in err and "saxpy.py:9:5" in err
    assert "Traceback" not in err and not list(tmp_path.glob("*.cu"))
