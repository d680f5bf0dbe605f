"""The chain of equivalence with exo-lang (specs/chain.md): a kernel's sequential reading is
proved equal to a three-line exo-lang reference for all sizes, and seeded wrong kernels (race-free,
so the S/M proof passes them) are refuted with the element and the update, replayed by running
both procs compiled by exo-lang."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chain_support import GEMM_REF, MUTANTS, SAXPY_REF, proc_name, write_mutant
from conftest import EXAMPLES, load_one

from verifier.chain.check import check_chain
from verifier.cli import main
from verifier.results import ChainStatus, FindingKind, ObligationStatus



def _chain(path: Path, name: str, ref: str = GEMM_REF):
    return check_chain(load_one(path, name), ref, None, 30.0)


@pytest.mark.rule("CHAIN-7.1")
def test_gemm_sm80_is_proved_equal_to_the_reference_for_all_sizes() -> None:
    chain, finding = _chain(EXAMPLES / "gemm_sm80.py", "gemm_sm80")
    assert chain.status is ChainStatus.proved, chain.message
    assert finding is None and chain.reassociated
    assert chain.obligations and all(o.status is ObligationStatus.proved
                                     for o in chain.obligations)
    assert {"map", "injective", "surjective", "last-writer"} <= {o.kind for o in chain.obligations}
    assert "reassociation" in chain.message and chain.summary().startswith("proved against")


@pytest.mark.rule("CHAIN-7.4")
def test_skipped_last_k_tile_is_refuted_with_the_missing_update(tmp_path: Path) -> None:
    m = MUTANTS["skip_last_ktile"]
    chain, f = _chain(write_mutant(m, tmp_path), proc_name(m))
    assert chain.status is ChainStatus.refuted
    assert f is not None and f.kind is FindingKind.chain and f.variable == "C"
    assert "is missing from the kernel" in f.message
    c = f.counterexample
    assert c is not None and c.replayed and len(c.index) == 2
    # the missing update is a product of the last k-tile: k in [K - 32, K)
    assert c.sizes["K"] - 32 <= c.iterators["k"] < c.sizes["K"]
    assert f.related and f.related[0].loc.file.endswith("gemm_ref.py")


def test_cli_against_proves_and_reports_the_chain(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--format", "json", str(EXAMPLES / "saxpy.py"), "--against", SAXPY_REF])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    chain = doc["results"][0]["chain"]
    assert chain["status"] == "proved" and chain["reference"] == SAXPY_REF
    assert not chain["reassociated"]


@pytest.mark.rule("CHAIN-9.2")
def test_cli_refutes_a_race_free_kernel_that_computes_the_wrong_thing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_mutant(MUTANTS["drops_y"], tmp_path)
    code = main([str(path), "--against", SAXPY_REF, "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "REFUTED" in out and "chain-mismatch[CHAIN-7.4]" in out
    assert "replayed by running both procs: yes" in out
