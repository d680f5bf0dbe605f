"""PR-8 (specs/verification.md): the reads that both branches of `if k == 0:` overwrite /
`else:` accumulate (BW-2.3) make of A and B share one query per partner, which proves both
pairs when unsat; a branch holding anything else has no twins; a race on a twin is refuted by
the twins' own queries, at their own statements."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, load_one
from verifier.check import analyze
from verifier.encode import verify_proc
from verifier.encode.twins import merged_sites
from verifier.results import ObligationStatus, Verdict

PROGRAMS = ROOT / "tests" / "programs_blackwell"
GEMM = PROGRAMS / "bw_gemm.py"
ACCUMULATE = "Sm100_mma_tf32_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)"


def _line(path: Path, text: str) -> int:
    return next(k for k, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


@pytest.mark.rule("PR-8")
def test_operand_reads_of_the_two_mma_forms_are_twins() -> None:
    model = analyze(load_one(GEMM, "bw_gemm"))
    merged = merged_sites(model)
    assert sorted({s.buf.name for s in merged.values()}) == ["A_s", "B_s"]
    assert len(merged) == 4 and len({id(s) for s in merged.values()}) == 2
    for site in merged.values():  # the then-branch's read without the `if` condition
        assert site.loc.line == _line(GEMM, "Sm100_mma_tf32_zero_cta1(")
        assert len(site.ctx.conds) == 0


@pytest.mark.rule("PR-8")
@pytest.mark.parametrize("old, new", [
    (ACCUMULATE, ACCUMULATE + "\n                            " + ACCUMULATE),  # two statements
    (ACCUMULATE, ACCUMULATE.replace("B_s[:, :]", "A_s[0:64, :]")),  # B_s once
    (ACCUMULATE, ACCUMULATE + "\n                            Fence(tcgen05_ld, cuda_in_order)"),  # sync
])
def test_no_twins_unless_each_branch_is_the_one_alike_statement(
        tmp_path: Path, old: str, new: str) -> None:
    text = GEMM.read_text()
    assert old in text
    path = tmp_path / "bw_edit.py"
    path.write_text(text.replace(old, new))
    merged = merged_sites(analyze(load_one(path, "bw_gemm")))
    assert not merged, sorted({s.buf.name for s in merged.values()})


@pytest.mark.rule("PR-8")
def test_twin_pairs_proved_by_one_shared_query() -> None:
    result = verify_proc(load_one(GEMM, "bw_gemm"))
    assert result.verdict is Verdict.proved
    shared = [o for o in result.obligations if o.discharged_by == "PR-8"]
    twins = {_line(GEMM, "Sm100_mma_tf32_zero_cta1("), _line(GEMM, ACCUMULATE)}
    groups: dict[tuple[str, str, int], list[tuple[int, str]]] = {}
    for o in shared:  # KIND:VAR@l:c->l:c, one end a twin, the other the shared partner
        earlier, later = (int(end.split("@")[-1].split(":")[0])
                          for end in o.id.split(":", 1)[1].split("->"))
        twin, partner = (earlier, later) if earlier in twins else (later, earlier)
        assert twin in twins, o.id
        groups.setdefault((o.kind, o.id.split(":")[1].split("@")[0], partner), []).append((twin, o.query_hash))
    assert {v for _, v, _ in groups} == {"A_s", "B_s"}
    for members in groups.values():  # both twins of one partner, one query's hash
        assert {t for t, _ in members} == twins
        assert len({h for _, h in members}) == 1 and members[0][1]


@pytest.mark.rule("PR-8")
def test_race_on_a_twin_is_refuted_at_its_own_statement() -> None:
    path = PROGRAMS / "bw_gemm_bug_plain_arrive_war.py"
    result = verify_proc(load_one(path, "bw_gemm_bug_plain_arrive_war"))
    assert result.verdict is Verdict.refuted
    refuted = {o.id for o in result.obligations if o.status is ObligationStatus.refuted}
    zero, acc = _line(path, "Sm100_mma_tf32_zero_cta1("), _line(path, ACCUMULATE)
    tma = _line(path, "Sm90_copy_tensor_to_smem_swizzled_2f32(A_s")
    assert {i.split(":", 1)[1].split("@")[1].split(":")[0] for i in refuted
            if i.startswith("WAR:A_s")} == {str(zero), str(acc)}
    assert all(i.endswith(f"->{tma}:21") for i in refuted if i.startswith("WAR:A_s"))
    assert not any(o.discharged_by == "PR-8" for o in result.obligations
                   if o.id.startswith("WAR:A_s") and o.id.endswith(f"->{tma}:21"))
    (finding,) = [f for f in result.findings if f.variable == "A_s"]
    assert finding.counterexample is not None and finding.counterexample.replayed
