"""The `analysis` remark of upstream's debug log (API-6), written from spork-verify's own
collective analysis: the facts each line states are checked against the program (its units,
thread counts and warp ranges), the static error sits above the statement that raised it, and
a hazard `p.sync_check(...)` finds joins the same file."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.diagnostics import RejectedInput
from verifier.encode import verify_proc
from verifier.lang.stdlib import debug_log
from verifier.load.load import load_procs
from verifier.results import Verdict

from conftest import ROOT

PROGRAMS = ROOT / "tests" / "programs_remarks"


def _analysis(folder: Path, path: Path, verdict: Verdict) -> list[str]:
    (p,) = load_procs(path)
    assert verify_proc(p).verdict is verdict
    debug_log.get_global_debug_log().write_all_impl()
    return [line.strip() for line in (folder / "debug" / f"{p.name}-analysis.py").read_text()
            .splitlines()]


def _above(lines: list[str], stmt: str, n: int = 1, start: int = 0) -> list[str]:
    """The `n` lines above the first statement `stmt` from line `start`."""
    at = lines.index(stmt, start)
    return lines[at - n:at]


@pytest.mark.rule("API-6", "COLL-2.1", "COLL-5.2")
def test_analysis_states_boxes_pitches_and_distributions(debug_folder: Path) -> None:
    lines = _analysis(debug_folder, ROOT / "examples" / "smem_matmul.py", Verdict.proved)
    # blockDim=256: the device function's domain and box are the whole CTA
    assert _above(lines, "for mt in cuda_tasks(0, (M / 16)):", 2) == [
        "# Domain (ω.D) = [ 256]", "#    Box (ω.B) = [ 256]"]
    # acc[ty, tx] with ty over 16-thread groups and tx over threads: 2 distributed dims
    assert _above(lines, "acc: f32[16, 16] @ CudaRmem")[0].startswith(
        "# distributed dims: 2, thread pitch tuple (16, 1) @ ")
    assert _above(lines, "A_s: f32[16, 16] @ CudaSmemLinear")[0].startswith(
        "# distributed dims: 0, thread pitch tuple () @ ")
    # a loop over units of 16 threads: pitch 16, its index threadIdx.x / 16; inside, 16 threads
    ty = "for ty in cuda_threads[16 * cuda_thread](0, 16):"
    assert _above(lines, ty)[0].startswith("# thread_pitch=16; exo_16thr_ty = threadIdx.x / 16 @ ")
    tx = "for tx in cuda_threads[cuda_thread](0, 16):"
    assert _above(lines, tx, 3) == ["# Domain (ω.D) = [ 256]", "#    Box (ω.B) = [  16]",
                                    _above(lines, tx)[0]]
    assert _above(lines, tx)[0].startswith("# thread_pitch=1; exo_1thr_tx = threadIdx.x % 16 @ ")
    assert _above(lines, "acc[ty, tx] = 0.0", 2) == ["# Domain (ω.D) = [ 256]",
                                                     "#    Box (ω.B) = [   1]"]


@pytest.mark.rule("API-6", "COLL-5.4")
def test_analysis_names_the_failed_deduction_above_the_allocation(debug_folder: Path) -> None:
    lines = _analysis(debug_folder, PROGRAMS / "coll_offsets_bug.py", Verdict.rejected)
    (error,) = _above(lines, "vals: f32[16, 4] @ CudaRmem")
    assert error.startswith("# ") and "coll_offsets_bug.py:12:13: Distributed memory " \
        "deduction for vals failed: Incompatible offsets" in error
    # the two loop nests index vals through different thread expressions: warps 1..2 start at
    # thread 32 of a 128-thread CTA, so their m is (threadIdx.x - 32) / 4
    m = "for m in cuda_threads[4 * cuda_thread](0, 16):"
    first = lines.index(m)
    assert lines[first - 1].startswith("# thread_pitch=4; exo_4thr_m = threadIdx.x / 4 @ ")
    assert _above(lines, m, 3, first + 1) == [
        "# Domain (ω.D) = [ 128]", "#    Box (ω.B) = [  64]",
        _above(lines, m, 1, first + 1)[0]]
    assert _above(lines, m, 1, first + 1)[0].startswith(
        "# thread_pitch=4; exo_4thr_m = ((threadIdx.x - 32) / 4) @ ")


@pytest.mark.rule("API-6", "COLL-2.7")
def test_analysis_places_an_expression_error_above_its_statement(debug_folder: Path) -> None:
    lines = _analysis(debug_folder, PROGRAMS / "threads_variable_hi.py", Verdict.rejected)
    (error,) = _above(lines, "for i in cuda_threads[cuda_thread](0, N):")
    assert error.endswith("threads_variable_hi.py:12:38: expected literal int value for hi of i "
                          "loop (rewrite with simplify(...) if needed)")


@pytest.mark.rule("API-6", "API-3")
def test_sync_check_hazard_joins_the_analysis(debug_folder: Path) -> None:
    (p,) = load_procs(ROOT / "examples" / "smem_matmul_bug_nofence1.py")
    with pytest.raises(RejectedInput):
        p.sync_check(M=16, N=16, K=32)
    assert verify_proc(p).verdict is Verdict.refuted  # adds the collective analysis
    debug_log.get_global_debug_log().write_all_impl()
    text = (debug_folder / "debug" / f"{p.name}-analysis.py").read_text()
    lines = [line.strip() for line in text.splitlines()]
    # the machine's hazard (as in the sync-error file) and the analysis, in one file
    hazard, lacking = _above(lines, "acc[ty, tx] += (A_s[ty, k] * B_s[k, tx])", 2)
    assert hazard == "# RAW HAZARD @ A_s[0, 1]" and "lacks full visibility" in lacking
    assert _above(lines, "for k in seq(0, 16):", 3) == [
        "# k = 1", "# Domain (ω.D) = [ 256]", "#    Box (ω.B) = [   1]"]


@pytest.mark.rule("API-6")
def test_an_error_on_no_statements_line_shows_above_the_first() -> None:
    from verifier.check.analysis_remarks import analysis_remarks
    from verifier.check.static import Analyzer
    from verifier.lang.ir.printer import proc_text

    (p,) = load_procs(PROGRAMS / "threads_variable_hi.py")
    an = Analyzer(p)
    error = RejectedInput("an argument's memory", p.args[1].loc)  # the def line: no statement
    lines = [line.strip() for line in proc_text(p, analysis_remarks(an, error)).splitlines()]
    first = next(i for i, line in enumerate(lines) if line.startswith("with CudaDeviceFunction"))
    assert lines[first - 1] == f"# {p.args[1].loc}: an argument's memory"


@pytest.mark.rule("API-6")
def test_a_pass_run_again_replaces_its_remarks(debug_folder: Path) -> None:
    (p,) = load_procs(PROGRAMS / "threads_variable_hi.py")
    for _ in range(2):
        assert verify_proc(p).verdict is Verdict.rejected
    debug_log.get_global_debug_log().write_all_impl()
    text = (debug_folder / "debug" / f"{p.name}-analysis.py").read_text()
    assert text.count("expected literal int value") == 1
    assert text.count("Domain (ω.D)") == 1


@pytest.mark.rule("API-6")
def test_no_debug_folder_no_analysis(tmp_path: Path) -> None:
    assert debug_log.get_global_debug_log_path() is None
    (p,) = load_procs(PROGRAMS / "threads_variable_hi.py")
    assert verify_proc(p).verdict is Verdict.rejected
    debug_log.get_global_debug_log().write_all_impl()
    assert not list(tmp_path.iterdir())
