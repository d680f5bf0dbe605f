"""Blackwell tcgen05 (specs/blackwell.md, BW-*): the static rules reject with their code and
line, the shared timeline tables cover every new qual-tl, the symbolic verdicts agree with the
concrete machine at small sizes, and kernels written against `exo.platforms.Sm100` load.
Verdicts of the bundled programs (tests/programs_blackwell) are checked by test_examples with
the other kernels; their CUDA by tests/codegen/test_codegen_blackwell.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, load_one
from sizes import check_symbolic_equals_concrete
from verifier.diagnostics import SporkError
from verifier.encode import verify_proc
from verifier.lang.stdlib.timelines import SYNC_SETS, InstrTL, QualTL, SyncTL
from verifier.load.load import load_procs
from verifier.results import Verdict
from verifier.semantics import rules

PROGRAMS = ROOT / "tests" / "programs_blackwell"
GEMM = PROGRAMS / "bw_gemm.py"


def _line(path: Path, text: str) -> int:
    """1-based line of the only source line containing `text`."""
    hits = [k for k, ln in enumerate(path.read_text().splitlines(), 1) if text in ln]
    assert len(hits) == 1, hits
    return hits[0]


def _rejection(path: Path) -> SporkError:
    try:
        procs = load_procs(path)
    except SporkError as e:  # a bad template keyword raises when the file loads (LOAD-3)
        return e
    result = verify_proc(procs[0])
    assert result.verdict is Verdict.rejected, result
    (finding,) = result.findings
    return finding


@pytest.mark.parametrize("name, code, rule, where", [
    ("bw_gemm_bug_never_freed", "ERR-A33", "BW-1.3", "Sm100_tmem_alloc(D"),
    ("bw_gemm_bug_columns", "ERR-A34", "BW-1.2", "Sm100_tmem_alloc(D"),
    ("bw_gemm_bug_warp_commit", "ERR-L07", "BW-3.1", "Arrive(tcgen05_commit) >> done"),
    ("bw_gemm_bug_wrong_barrier", "ERR-A27", "LANG-5.10", "done: barrier"),
])
def test_static_rules_reject_with_code_and_line(name: str, code: str, rule: str,
                                                where: str) -> None:
    path = PROGRAMS / f"{name}.py"
    err = _rejection(path)
    assert (err.code, err.rule) == (code, rule), err
    assert err.loc.line == _line(path, where), err


@pytest.mark.parametrize("edit, code, rule", [
    (("Sm100_tmem_relinquish_alloc_permit()", "Sm100_tmem_relinquish_alloc_permit()"), None,
     None),
    (("                Sm100_tmem_relinquish_alloc_permit()\n",
      "            Sm100_tmem_relinquish_alloc_permit()\n"), "ERR-A19", "COLL-3.1"),
    (("Sm100_tmem_alloc(D[:, :], ncols=64)", "Sm100_tmem_alloc(D[:, 0:32], ncols=32)"),
     "ERR-A34", "BW-1.1"),
    (("Fence(tcgen05_ld, cuda_in_order)", "Fence(tcgen05_ld, cuda_temporal)"), "ERR-L08",
     "BW-3.2"),
    (("Sm100_mma_tf32_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)",
      "Sm100_mma_tf32_cta1(D[:, :], A_s[:, :], B_s[:, :], M=96, N=64)"), "ERR-P07", "BW-2.1"),
    (("Sm100_mma_tf32_zero_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)",
      "Sm100_mma_tf32_zero_cta1(D[:, :], A_s[:, :], B_s[:, :], M=96, N=64)"), "ERR-P07",
     "BW-2.1"),
    (("            Fence(cuda_in_order, cuda_in_order)\n",
      "            Fence(cuda_in_order, cuda_in_order)\n            D[0, 0] = 0.0\n"), "ERR-A01",
     "LANG-4.2"),
    (("Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[:, :], N=64)",
      "Sm100_tmem_ld_32x32b_f32(Dr[:, 0:48], D[:, 0:48], N=48)"), "ERR-P07", "BW-2.2"),
])
def test_edits_of_the_gemm(tmp_path: Path, edit: tuple[str, str], code: str | None,
                           rule: str | None) -> None:
    """The unedited GEMM proves; each edit breaks exactly the rule it names."""
    text = GEMM.read_text()
    assert edit[0] in text
    path = tmp_path / "bw_edit.py"
    path.write_text(text.replace(edit[0], edit[1]))
    if code is None:
        assert verify_proc(load_one(path, "bw_gemm")).verdict is Verdict.proved
        return
    err = _rejection(path)
    assert (err.code, err.rule) == (code, rule), err
    last = [ln for ln in edit[1].split("\n") if ln.strip()][-1]
    assert err.loc.line == _line(path, last.strip()), err


@pytest.mark.rule("BW-2.5")
def test_f8f6f4_takes_k_32(tmp_path: Path) -> None:
    """kind::f8f6f4 reads K = 32 e4m3 elements (32 bytes) of A and B per instruction: the
    kind::f16 K of 16 is a located shape error."""
    old = "A_s[:, :], B_s[:, :], M=128"
    text = (PROGRAMS / "bw_gemm_f8.py").read_text()
    assert text.count(old) == 2  # the overwrite form (k == 0) and the accumulating one
    path = tmp_path / "bw_f8_k16.py"
    path.write_text(text.replace(old, "A_s[:, 0:16], B_s[:, 0:16], M=128"))
    err = _rejection(path)
    assert err.code == "ERR-P21" and "the parameter needs 32" in str(err), err
    assert err.loc.line == _line(path, "Sm100_mma_f8f6f4_zero_cta1(")


def test_tables_cover_every_tcgen05_timeline() -> None:
    """BW-4.1..4.3 rows exist in the shared tables (the machine and the encoder read them)."""
    tc = [q for q in QualTL if q.value.startswith("tcgen05_")]
    assert len(tc) == 6 and all(q in rules.CONVERGENT for q in tc)
    assert all(q in SYNC_SETS[SyncTL.cuda_stream_sync].full for q in tc if q is not QualTL.tcS)
    assert {i.value for i in InstrTL if i.value.startswith("tcgen05_")} == {
        "tcgen05_mma_instr", "tcgen05_cp_instr", "tcgen05_shift_instr", "tcgen05_ld_instr",
        "tcgen05_st_instr"}
    assert rules.qual_entry("tmem", InstrTL.tcgen05_mma_instr, "D").q0 is QualTL.tcM
    assert rules.qual_entry("smem", InstrTL.tcgen05_mma_instr, "A").q0 is QualTL.tcS
    assert rules.qual_entry("rmem_matrix", InstrTL.tcgen05_ld_instr, "Dr").extended == \
        frozenset({QualTL.tcL, QualTL.cuda1})
    with pytest.raises(SporkError) as info:  # wgmma does not touch TMEM (SEM-3.3)
        rules.qual_entry("tmem", InstrTL.wgmma_async_instr, "D")
    assert info.value.code == "ERR-A12"
    # BW-3.3: only after_thread_sync hands a thread sync on to tcgen05.ld; plain syncs don't
    assert QualTL.tcL in SYNC_SETS[SyncTL.tcgen05_after_thread_sync].full
    assert QualTL.tcL not in SYNC_SETS[SyncTL.cuda_in_order].temporal


@pytest.mark.rule("BW-2.3")
def test_overwrite_form_differs_only_in_writing_d() -> None:
    """Each `Sm100_mma_*_zero_*` is its accumulating form with D written, not read-modify-
    written: the same timeline, unit, keywords, shape rule and operands."""
    from verifier.lang.stdlib.instrs_sm100 import SM100_INSTRS
    mmas = [n for n in SM100_INSTRS if n.startswith("Sm100_mma_")]
    zeros = {n: SM100_INSTRS[n] for n in mmas if "_zero_" in n}
    assert sorted(zeros) == sorted(
        n.replace("_cta", "_zero_cta") for n in mmas if "_zero_" not in n)
    for name, zero in zeros.items():
        acc = SM100_INSTRS[name.replace("_zero", "")]
        assert (zero.instr_tl, zero.unit, zero.template, zero.check_template,
                zero.template_code) == (acc.instr_tl, acc.unit, acc.template,
                                        acc.check_template, acc.template_code)
        assert [p.access for p in zero.params] == ["w", "r", "r"]
        assert [p.access for p in acc.params] == ["rw", "r", "r"]
        for pz, pa in zip(zero.params, acc.params, strict=True):
            kw = {"M": 256 if name.endswith("_cta2") else 128, "N": 64}
            assert (pz.name, pz.formal_mem, pz.shape(kw)) == (pa.name, pa.formal_mem,
                                                              pa.shape(kw))


@pytest.mark.rule("BW-2.3")
def test_accumulate_only_gemm_is_still_accepted(tmp_path: Path) -> None:
    """Accumulating onto the undefined TMEM of the first K step computes garbage but is a legal,
    correctly synchronized program: the verifier proves it (it checks synchronization, not
    values)."""
    text = GEMM.read_text()
    line = next(ln for ln in text.splitlines() if "Sm100_mma_tf32_cta1(" in ln)
    pad = " " * (len(line) - len(line.lstrip()) - 4)
    block = (f"{pad}if k == 0:\n{line.replace('_cta1', '_zero_cta1')}\n{pad}else:\n{line}\n")
    assert block in text
    path = tmp_path / "bw_accumulate_only.py"
    path.write_text(text.replace(block, f"{pad}{line.lstrip()}\n"))
    assert "_zero_" not in path.read_text()
    assert verify_proc(load_one(path, "bw_gemm")).verdict is Verdict.proved


@pytest.mark.parametrize("name", ["bw_gemm", "bw_gemm_bug_no_after_fence",
                                  "bw_gemm_bug_plain_arrive_war"])
def test_symbolic_equals_concrete(name: str) -> None:
    check_symbolic_equals_concrete(load_one(PROGRAMS / f"{name}.py", name), count=2, bound=3)


def test_upstream_module_names_load(tmp_path: Path) -> None:
    """A kernel importing upstream's module names (exo.platforms.Sm100, LOAD-6) loads."""
    text = GEMM.read_text().replace(
        "from verifier.lang import *",
        "from exo import proc\nfrom exo.platforms.cuda import *\nfrom exo.platforms.Sm90 import *"
        "\nfrom exo.platforms.Sm100 import *")
    path = tmp_path / "bw_upstream_names.py"
    path.write_text(text)
    proc = load_one(path, "bw_gemm")
    assert verify_proc(proc).verdict is Verdict.proved


@pytest.mark.rule("BW-5.4", "BW-CG-9")
def test_every_mma_and_allocator_has_its_cta_group_in_the_one_table() -> None:
    """The static rules and codegen read one .cta_group table: every tcgen05.mma form (f8f6f4
    included), allocator and tcgen05.cp is in it, tcgen05.ld / st are not (PTX gives them none)."""
    from verifier.lang.stdlib.instrs_sm100 import CTA_GROUP, SM100_INSTRS

    for name in SM100_INSTRS:
        grouped = name.startswith(("Sm100_mma_", "Sm100_tmem_alloc", "Sm100_tmem_dealloc",
                                   "Sm100_tmem_relinquish", "Sm100_tmem_cp_"))
        assert (name in CTA_GROUP) == grouped, name
        if grouped:
            assert CTA_GROUP[name] == (2 if name.endswith("_cta2") else 1), name
