"""The chain of equivalence with exo-lang (specs/chain.md): a kernel's sequential reading is
proved equal to a short exo-lang reference for all sizes, and seeded wrong kernels (race-free,
so the S/M proof passes them) are refuted with the element and the update, replayed by running
both procs compiled by exo-lang."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from chain_support import EQUIVALENT, GEMM_REF, MUTANTS, PROVED, ROW_SUMS_REF, proc_name, write_mutant
from conftest import EXAMPLES, load_one

from verifier.chain.check import check_chain
from verifier.cli import main
from verifier.results import ChainStatus, FindingKind, ObligationStatus



def _chain(path: Path, name: str, ref: str = GEMM_REF):
    return check_chain(load_one(path, name), ref, None, 60.0)


@pytest.mark.rule("CHAIN-7.1")
@pytest.mark.parametrize("example", [  # gemm_sm80_ws in .ci/run (issue 20)
    "gemm_sm80", pytest.param("gemm_sm80_ws", marks=pytest.mark.extended)])
def test_bundled_gemms_are_proved_equal_to_the_reference_for_all_sizes(example: str) -> None:
    chain, finding = _chain(EXAMPLES / f"{example}.py", example)
    assert chain.status is ChainStatus.proved, chain.message
    assert finding is None and chain.reassociated
    assert chain.obligations and all(o.status is ObligationStatus.proved
                                     for o in chain.obligations)
    assert {"map", "injective", "surjective", "last-writer"} <= {o.kind for o in chain.obligations}
    assert "reassociation" in chain.message and chain.summary().startswith("proved against")


def _check_refuted(name: str, tmp_path: Path) -> None:
    m = MUTANTS[name]
    chain, f = check_chain(load_one(write_mutant(m, tmp_path), proc_name(m)), m.reference,
                           None, 60.0)
    assert chain.status is ChainStatus.refuted, chain.message
    assert f is not None and f.kind is FindingKind.chain and f.rule == "CHAIN-7.4"
    assert f.variable == m.output
    assert {"missing": "is missing from the kernel", "duplicated": "more than once",
            "different": "matches no update of the reference"}[m.kind] in f.message
    c = f.counterexample
    assert c is not None and c.replayed and c.index and c.sizes
    assert f"{m.output}[{', '.join(map(str, c.index))}]" in f.message
    if m.kind != "missing" and "(the initial value)" not in f.message:
        # located at the kernel update, with its iterators
        assert f.loc.file.endswith(f"{proc_name(m)}.py") and f.loc.line > 1 and c.iterators
    return c


@pytest.mark.rule("CHAIN-7.4")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_skipped_last_k_tile_is_refuted_with_the_missing_update(tmp_path: Path) -> None:
    c = _check_refuted("skip_last_ktile", tmp_path)
    # the missing product belongs to the last k-tile: k in [K - 32, K)
    assert c.sizes["K"] - 32 <= c.iterators["k"] < c.sizes["K"]


@pytest.mark.slow
@pytest.mark.rule("CHAIN-7.4")
@pytest.mark.parametrize("name", ["guard_off_by_one", "wrong_accumulator", "wrong_tile_offset",
                                  "wrong_slot_read", "kk_short", "store_reduce",
                                  "b_col_major"])
def test_seeded_wrong_gemms_are_refuted_and_replayed(name: str, tmp_path: Path) -> None:
    _check_refuted(name, tmp_path)


@pytest.mark.slow  # exo-lang and gcc compile every proved example: .ci/run runs it
@pytest.mark.rule("CHAIN-1.6")
def test_erased_procs_of_the_proved_examples_compile_to_c_with_exo_lang(tmp_path: Path) -> None:
    from verifier.chain.erase import erase
    from verifier.chain.exo_bridge import compile_to_c
    from verifier.chain.exo_text import module_source

    items = [(example, module_source(erase(load_one(EXAMPLES / f"{file}.py", example))),
              example) for file, example, _ in PROVED]
    out = compile_to_c(items)
    assert sorted(out) == sorted(label for label, _, _ in items)
    for label, (c_text, h_text) in out.items():
        (tmp_path / f"{label}.h").write_text(h_text)
        (tmp_path / f"{label}.c").write_text(c_text)
        done = subprocess.run(["gcc", "-std=gnu11", "-c", "-o", str(tmp_path / f"{label}.o"),
                               str(tmp_path / f"{label}.c")], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert f"void {label}(" in c_text


@pytest.mark.rule("CHAIN-8.4")
def test_fallback_is_labelled_tested_never_proved() -> None:
    chain, finding = _chain(EXAMPLES / "block_reduce.py", "block_reduce", ROW_SUMS_REF)
    assert chain.status is ChainStatus.tested and finding is None
    assert "recurrence" in chain.message and "numpy.isclose" in chain.message
    assert len(chain.tested_sizes) == 3 and chain.summary().startswith("tested equivalent")


@pytest.mark.rule("CHAIN-8.1")
def test_exo_lang_never_enters_the_verifier_process() -> None:
    code = ("import sys; from verifier.chain.check import check_chain; "
            "from verifier.load.load import load_procs; "
            f"p = load_procs({str(EXAMPLES / 'saxpy.py')!r})[0]; "
            f"r, _ = check_chain(p, {PROVED[-1][2]!r}, None, 30.0); "
            "print(r.status.value, 'exo' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.stdout.split() == ["proved", "False"], done.stderr


def test_cli_reports_the_chain_in_json_and_the_certificate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from verifier.codegen import read_certificate

    _, _, ref = PROVED[-1]
    code = main(["--format", "json", str(EXAMPLES / "saxpy.py"), "--against", ref,
                 "--emit-cuda", str(tmp_path)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    chain = doc["results"][0]["chain"]
    assert chain["status"] == "proved" and chain["reference"] == ref
    assert not chain["reassociated"] and chain["obligations"]
    cert = read_certificate((tmp_path / "saxpy.cu").read_text())
    assert cert is not None and cert.chain == f"proved against {ref}"



@pytest.mark.extended  # .ci/run runs it; the default run leaves it out for time (issue 20)
@pytest.mark.rule("CHAIN-9.4")
def test_check_cert_re_runs_the_chain_claim(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """--check-cert re-checks a certificate's chain claim; a resealed forged claim fails."""
    from verifier.codegen.certificate import certificate_header, read_emitted
    from verifier.results import Certificate

    _, _, ref = PROVED[-1]
    assert main([str(EXAMPLES / "saxpy.py"), "--against", ref, "--no-progress",
                 "--emit-cuda", str(tmp_path)]) == 0
    cu = tmp_path / "saxpy.cu"
    capsys.readouterr()
    assert main(["--check-cert", str(cu), str(EXAMPLES / "saxpy.py")]) == 0
    assert "matches" in capsys.readouterr().out
    emitted, _ = read_emitted(cu.read_bytes())
    assert emitted is not None and emitted.cert.chain == f"proved against {ref}"
    forged = Certificate.from_json(emitted.cert.to_json().replace(
        f"proved against {ref}", f"proved against {ref} (reassociating += reductions)"))
    cu.write_text("\n".join(certificate_header(emitted.source, forged, emitted.body)) + "\n"
                  + emitted.body)  # resealed: the file agrees with itself
    assert main(["--check-cert", str(cu), str(EXAMPLES / "saxpy.py")]) == 5
    assert "the chain is" in capsys.readouterr().out

@pytest.mark.rule("CHAIN-9.2")
def test_cli_refutes_a_race_free_kernel_that_computes_the_wrong_thing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m = MUTANTS["drops_y"]
    code = main([str(write_mutant(m, tmp_path)), "--against", m.reference, "--no-progress",
                 "--format", "sarif"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    (result,) = doc["runs"][0]["results"]
    assert result["ruleId"] == "CHAIN-7.4" and result["properties"]["kind"] == "chain-mismatch"
    assert "replayed by running both procs" in result["message"]["text"]


@pytest.mark.rule("CHAIN-9.1")
def test_a_kernel_file_names_its_reference(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "saxpy_ref.py").write_text((EXAMPLES / "chain" / "saxpy_ref.py")
                                                   .read_text())
    kernel = tmp_path / "saxpy.py"
    kernel.write_text("# spork-verify: against saxpy=ref/saxpy_ref.py:saxpy\n" +
                      (EXAMPLES / "saxpy.py").read_text())
    assert main([str(kernel), "--no-progress"]) == 0
    assert "chain vs ref/saxpy_ref.py:saxpy: PROVED for all sizes" in capsys.readouterr().out


@pytest.mark.extended  # .ci/run runs it; the default run leaves it out for time (issue 20)
@pytest.mark.rule("CHAIN-9.3")
def test_cli_exit_code_3_when_the_chain_is_only_tested(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(EXAMPLES / "block_reduce.py"), "--against", ROW_SUMS_REF,
                 "--no-progress"])
    out = capsys.readouterr().out
    assert code == 3 and "TESTED only (not a proof)" in out and "tested at sizes nb=1" in out


@pytest.mark.rule("CHAIN-8.2")
@pytest.mark.parametrize("spec, says", [
    ("missing_ref.py:gemm", "not found"),
    ("{chain}/gemm_ref.py:nothere", "defines no exo-lang proc named 'nothere'"),
    ("{chain}/gemm_ref.py", "expects FILE.py:PROC"),
])
def test_a_bad_reference_is_rejected_with_a_located_message(
        spec: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    spec = spec.format(chain=EXAMPLES / "chain")
    code = main([str(EXAMPLES / "saxpy.py"), "--against", spec, "--no-progress"])
    out = capsys.readouterr().out
    assert code == 2 and "REJECTED" in out and says in out


@pytest.mark.rule("CHAIN-1.4")
def test_every_instr_has_a_sequential_behaviour_or_a_reason() -> None:
    from verifier.chain.behaviour import BEHAVIOUR_TEXT, NO_BEHAVIOUR, behaviour
    from verifier.lang.stdlib.instrs import INSTRS

    assert [n for n in INSTRS if n not in BEHAVIOUR_TEXT and n not in NO_BEHAVIOUR] == []
    for name in BEHAVIOUR_TEXT:
        beh = behaviour(name)
        params = {p.name for p in INSTRS[name].params}
        assert beh.lhs in params and beh.loops, name



@pytest.mark.rule("CHAIN-8.2")
def test_exo_langs_own_error_location_is_reported(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    ref = tmp_path / "ref.py"
    ref.write_text((EXAMPLES / "chain" / "saxpy_ref.py").read_text().replace("+ y[i]", "+ z[i]"))
    code = main([str(EXAMPLES / "saxpy.py"), "--against", f"{ref}:saxpy", "--no-progress"])
    out = capsys.readouterr().out
    line = 1 + ref.read_text().splitlines().index("        y[i] = a * x[i] + z[i]")
    assert code == 2 and f"{ref}:{line}:" in out and "variable 'z' undefined" in out


@pytest.mark.rule("CHAIN-9.3")
def test_arguments_are_matched_by_name_else_unsupported_and_untested(tmp_path: Path) -> None:
    ref = tmp_path / "ref.py"
    ref.write_text((EXAMPLES / "chain" / "saxpy_ref.py").read_text().replace("x:", "xs:").replace("x[i]", "xs[i]"))
    chain, finding = _chain(EXAMPLES / "saxpy.py", "saxpy", f"{ref}:saxpy")
    assert chain.status is ChainStatus.unsupported and finding is None
    assert "matched by name" in chain.message and not chain.tested_sizes


@pytest.mark.rule("CHAIN-8.4")
def test_the_fallback_refutes_a_wrong_tree_reduction_by_running_it(tmp_path: Path) -> None:
    m = MUTANTS["wrong_partner"]
    chain, f = check_chain(load_one(write_mutant(m, tmp_path), proc_name(m)), m.reference,
                           None, 60.0)
    assert chain.status is ChainStatus.refuted and "found by testing" in chain.message
    assert f is not None and f.kind is FindingKind.chain and f.rule == "CHAIN-8.4"
    assert f.variable == "out" and f.counterexample is not None and f.counterexample.replayed


@pytest.mark.slow
@pytest.mark.parametrize("file, name, ref", PROVED, ids=[p[0] for p in PROVED])
def test_proved_chains_agree_with_running_both_procs(file: str, name: str, ref: str) -> None:
    """Differential: what the proof says for all sizes, the compiled procs show at three."""
    from verifier.chain.erase import erase
    from verifier.chain.run import asserts, sample_sizes, test_equal
    from verifier.lang.ir import ir

    p = load_one(EXAMPLES / f"{file}.py", name)
    erased = erase(p)
    size_names = tuple(a.name.name for a in p.args if isinstance(a.typ, ir.Control))
    sizes = sample_sizes(asserts(erased), size_names, 3, 30.0)
    outputs = [a.name.name for a in p.args if isinstance(a.typ, ir.Tensor)]
    path, _, proc = ref.rpartition(":")
    assert len(sizes) == 3
    assert test_equal(erased, path, proc, sizes, outputs) is None


@pytest.mark.slow
@pytest.mark.rule("CHAIN-7.1")
@pytest.mark.parametrize("m", EQUIVALENT, ids=[m.name for m in EQUIVALENT])
def test_equivalent_rewrites_of_the_gemm_are_still_proved(m, tmp_path: Path) -> None:
    chain, finding = check_chain(load_one(write_mutant(m, tmp_path), proc_name(m)),
                                 m.reference, None, 60.0)
    assert chain.status is ChainStatus.proved and finding is None, chain.message
