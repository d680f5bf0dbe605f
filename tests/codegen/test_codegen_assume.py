"""`--assume NAME=VALUE` (specs/cli.md CLI-11; specs/codegen.md CG-A1): a proof for every size
with the assumed values, its certificate, the run-time check in the emitted host function,
`--check-cert` re-applying the header's assumptions, and the usage errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from codegen_support import HERE, SM90A_GEMMS, sporkbench_proc
from test_codegen_nvcc import compile_together
from test_codegen_tamper import _reseal

from verifier.cli import main
from verifier.cli_cert import CERT_MISMATCH
from verifier.report.json_in import results_from_json

KERNELS = HERE / "assume_kernels.py"
SCHEMA = HERE.parents[1] / "docs" / "json-schema.json"
NAME = "split_k_copy"
CHECK = "if (K != 1) {  // --assume K=1 (CG-A1)"

pytestmark = pytest.mark.rule("CLI-11")


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args] + ["--no-cache", "--no-progress"])
    out = capsys.readouterr()
    return code, out.out, out.err


def _line(text: str) -> int:
    """The 1-based line of KERNELS that holds `text`."""
    return next(k for k, line in enumerate(KERNELS.read_text().splitlines(), 1) if text in line)


def test_refuted_for_all_sizes_proved_with_the_assumption(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, KERNELS)
    assert code == 1 and "REFUTED" in out and "sizes K=2" in out, out
    code, out, _ = run(capsys, KERNELS, "--assume", "K=1")
    assert code == 0 and f"{NAME}: PROVED for all sizes with K = 1 (" in out, out
    code, out, _ = run(capsys, KERNELS, "--assume", "K=1", "--format", "json")
    (result,) = json.loads(out)["results"]
    assert code == 0 and result["verdict"] == "proved" and result["assumptions"] == {"K": 1}
    assert result["certificate"] is not None
    jsonschema.validate(json.loads(out), json.loads(SCHEMA.read_text()))
    (back,) = results_from_json(out)
    assert back.assumptions == (("K", 1),)


def test_a_refutation_under_assumptions_is_replayed_at_sizes_satisfying_them(
        capsys: pytest.CaptureFixture[str]) -> None:
    """n is not what makes it racy: with n = 3 assumed the race stays, at n = 3."""
    code, out, _ = run(capsys, KERNELS, "--assume", "n=3", "--format", "json")
    (result,) = json.loads(out)["results"]
    assert code == 1 and result["verdict"] == "refuted" and result["assumptions"] == {"n": 3}
    (finding,) = result["findings"]
    cex = finding["counterexample"]
    assert finding["kind"] == "WAW" and finding["variable"] == "y" and cex["replayed"]
    assert cex["sizes"]["n"] == 3 and cex["sizes"]["K"] >= 2
    assert finding["location"]["line"] == _line("y[blk * 256 + t] =")
    code, out, _ = run(capsys, KERNELS, "--assume", "n=3")
    assert "REFUTED with n = 3" in out, out


@pytest.fixture(scope="module")
def emitted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cu")
    assert main([str(KERNELS), "--assume", "K=1", "--emit-cuda", str(folder), "--no-cache",
                 "--no-progress"]) == 0
    return folder / f"{NAME}.cu"


@pytest.mark.rule("CG-A1")
def test_the_host_function_checks_the_assumption_before_anything(emitted: Path) -> None:
    text = emitted.read_text()
    assert '"assumptions": [["K", 1]]' in text  # the certificate binds it
    host = text[text.index(f'extern "C" void {NAME}('):]
    body = host.splitlines()[2:6]
    assert body[0].strip() == CHECK, body
    assert "fprintf(stderr" in body[1] and "K == 1 (--assume K=1)" in body[1]
    assert "not launched" in body[1] and body[2].strip() == "return;"
    assert host.index(CHECK) < host.index("EXO_ASSUME") < host.index("exo_launch0_")


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_the_checked_host_function_compiles(emitted: Path, tmp_path: Path) -> None:
    compile_together(tmp_path, {NAME: emitted.read_text()}, "sm_80")


@pytest.mark.rule("CLI-9")
def test_check_cert_re_applies_the_recorded_assumptions(
        emitted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--check-cert", emitted)
    assert code == 0 and "matches" in out and "with K = 1" in out, out
    text = emitted.read_text()
    forged = tmp_path / f"{NAME}.cu"
    forged.write_text(text.replace('[["K", 1]]', '[["K", 2]]', 1))  # an edit: the seal breaks
    code, out, _ = run(capsys, "--check-cert", forged, KERNELS)
    assert code == CERT_MISMATCH and "ERR-V14" in out, out
    # resealed: the file is self-consistent, but the CUDA codegen emits checks K == 2 and the
    # re-run proof under K = 2 is refuted
    forged.write_text(_reseal(text, cert_line=('[["K", 1]]', '[["K", 2]]')))
    code, out, _ = run(capsys, "--check-cert", forged, KERNELS)
    assert code == CERT_MISMATCH and "is not what spork-verify emits" in out, out
    resealed = _reseal(text, body=text[text.index("\n// nvcc target") + 1:].replace(
        "K != 1", "K != 2").replace("K == 1 (--assume K=1)", "K == 2 (--assume K=2)").replace(
        "--assume K=1 (CG-A1)", "--assume K=2 (CG-A1)"), cert_line=('[["K", 1]]', '[["K", 2]]'))
    forged.write_text(resealed)  # the body forged to match too: only the proof catches it
    code, out, _ = run(capsys, "--check-cert", forged, KERNELS)
    assert code == CERT_MISMATCH and "not proved" in out and "refuted" in out, out
    forged.write_text(_reseal(text, cert_line=('"assumptions": [["K", 1]], ', "")))
    code, out, _ = run(capsys, "--check-cert", forged, KERNELS)  # the assumption dropped
    assert code == CERT_MISMATCH, out


@pytest.mark.parametrize("args, where, words", [
    (["--assume", "Q=1"], "@proc", "not a size argument of proc split_k_copy (its size "
     "arguments: K, n)"),
    (["--assume", "K=-1"], "def split_k_copy(K", "K is a size of proc split_k_copy, at least 0"),
    (["--assume", f"n={1 << 63}"], "def split_k_copy(K", "at most 9223372036854775807"),
])
def test_located_usage_errors(capsys: pytest.CaptureFixture[str], args: list[str], where: str,
                              words: str) -> None:
    code, out, _ = run(capsys, KERNELS, *args)
    assert code == 2 and "ERR-USAGE" in out and words in out, out
    line = _line(where) + (1 if where == "@proc" else 0)  # a proc is located at its def
    assert f"{KERNELS}:{line}:" in out, out


@pytest.mark.rule("CLI-11", "VAC-1")
def test_assumed_values_the_asserts_exclude_are_vacuous(capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """As `assert n == 0` placed first would be: vacuous at the assert that admits nothing
    (exit 3), never a usage error that hides it, never proved (issue 19)."""
    code, out, _ = run(capsys, KERNELS, "--assume", "n=0")
    assert code == 3 and "VACUOUS with n = 0" in out and "ERR-V12" in out, out
    assert f"{KERNELS}:{_line('assert n > 0')}:" in out and "--assume n=0" in out, out


@pytest.mark.parametrize("args, words", [
    (["--assume", "K=1", "--assume", "K=2"], "--assume gives K twice"),
    (["--assume", "K=1,K=2"], "K is given twice"),
    (["--assume", "K=one"], "expected NAME=VALUE"),
    (["--assume", "K=1", "--sizes", "K=2,n=1"], "--sizes gives other values than --assume"),
    (["--assume", "K=1", "--against", "ref.py:p"], "--against is not supported with --assume"),
    (["--assume", "K=1", "--check-cert", "x.cu"], "re-applies the assumptions"),
])
def test_option_usage_errors(capsys: pytest.CaptureFixture[str], args: list[str],
                             words: str) -> None:
    code, _, err = run(capsys, KERNELS, *args)
    assert code == 2 and words in err, err


def test_sizes_take_the_assumed_values(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, KERNELS, "--assume", "K=1", "--sizes", "n=2")
    assert code == 0 and "NO HAZARD at n=2, K=1" in out, out


RMEM_C = SM90A_GEMMS / "exocc_Sm90a_m128n256_rmemC.py"


@pytest.mark.slow
@pytest.mark.rule("CG-A1")
@pytest.mark.skipif(not RMEM_C.exists(), reason="no sporkbench checkout (set SPORKBENCH to one "
                    "to prove its rmemC GEMM with K_split = 1 assumed)")
def test_sporkbench_rmem_c_gemm_with_k_split_1(tmp_path: Path) -> None:
    from verifier.codegen import emit_cuda
    from verifier.encode import Options, verify_proc

    p = sporkbench_proc(RMEM_C, "_m1n1_m128n256_rmemC")
    r = verify_proc(p, Options(fixed_sizes={"K_split": 1}, releases=True))
    assert r.verdict.value == "proved" and r.certificate is not None, r.findings
    assert r.certificate.assumptions == (("K_split", 1),)
    text = emit_cuda(p, r.certificate)
    assert "if (K_split != 1) {" in text
    if shutil.which("nvcc") is not None:
        compile_together(tmp_path, {"rmem_c": text}, "sm_90a")


@pytest.mark.rule("CHAIN-9.3")
def test_a_files_chain_line_is_unsupported_under_assumptions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The chain is proved for all sizes, not the assumed ones: said, never skipped."""
    kernel = tmp_path / "kernel.py"
    kernel.write_text("# spork-verify: against ref.py:ref\n" + KERNELS.read_text())
    code, out, _ = run(capsys, kernel, "--assume", "K=1")
    assert code == 3 and "PROVED for all sizes with K = 1" in out, out
    assert "not checked under --assume" in out, out
