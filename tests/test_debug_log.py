"""Upstream's debug log (`exo.core.LoopIR`, API-6): the sync-error remarks are written from the
machine's finding in upstream's words; the other remark kinds are named, never faked."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib import debug_log
from verifier.load.load import load_procs
from verifier.load.upstream_modules import upstream_aliases

from conftest import ROOT


def _sync_error_text(folder: Path, example: str, sizes: dict[str, int]) -> str:
    (p,) = load_procs(ROOT / "examples" / example)
    with pytest.raises(RejectedInput):
        p.sync_check(**sizes)
    debug_log.get_global_debug_log().write_all_impl()
    name = "-".join([str(p.name)] + [str(v) for v in sizes.values()])
    return (folder / "debug" / f"{name}-sync-error.py").read_text()


@pytest.mark.rule("API-6")
def test_sync_error_remarks_name_the_hazard_and_the_instance(debug_folder: Path) -> None:
    text = _sync_error_text(debug_folder, "smem_matmul_bug_nofence1.py",
                            {"M": 16, "N": 16, "K": 32})
    lines = [line.strip() for line in text.splitlines()]
    # the hazard in upstream's words, above the failing statement (line 29 of the example)
    at = lines.index("acc[ty, tx] += (A_s[ty, k] * B_s[k, tx])")
    assert lines[at - 2].startswith("# RAW HAZARD @ A_s[0, 1]")
    assert "lacks full visibility" in lines[at - 1]
    # the failing instance's iterators above their loops (thread (0, 0) at k = 1)
    assert "# k = 1" in lines and "# tx = 0" in lines and "# ty = 0" in lines
    assert lines[lines.index("# k = 1") + 1] == "for k in seq(0, 16):"
    # the earlier access (thread (0, 1)'s write of A_s[0, 1]) above its statement
    earlier = next(line for line in lines if line.startswith("# earlier access of"))
    assert lines[lines.index(earlier) + 1] == "A_s[ty, tx] = A[((16 * mt) + ty), ((16 * kt) + tx)]"
    assert "tx = 1" in earlier


@pytest.mark.rule("API-6")
def test_free_hazard_remark_sits_above_the_allocation(debug_folder: Path) -> None:
    text = _sync_error_text(debug_folder, "smem_exchange_bug_nofinalfence.py", {"n": 256})
    lines = [line.strip() for line in text.splitlines()]
    at = lines.index("tile: f32[256] @ CudaSmemLinear")
    assert lines[at - 2].startswith("# WAR HAZARD @ free(tile[")


@pytest.mark.rule("API-6")
def test_no_debug_folder_writes_nothing(tmp_path: Path) -> None:
    assert debug_log.get_global_debug_log_path() is None
    (p,) = load_procs(ROOT / "examples" / "smem_exchange_bug_nofence.py")
    with pytest.raises(RejectedInput):
        p.sync_check(n=256)
    debug_log.get_global_debug_log().write_all_impl()  # the no-op log, as upstream's
    assert not list(tmp_path.iterdir())


@pytest.mark.rule("API-6")
def test_unserved_remark_kinds_are_named() -> None:
    why = debug_log.missing("/w/debug/gpu_gemm-coll_analysis.py")
    assert why is not None and "remark `coll_analysis`" in why and "not supported" in why
    assert debug_log.missing("/w/debug/k-256-sync-error.py") is None  # served: written
    assert debug_log.missing("/w/debug/gpu_gemm-analysis.py") is None
    assert debug_log.missing("/w/elsewhere/gpu_gemm-camspork.py") is None
    assert {k for k, v in debug_log.REMARK_KINDS.items() if v.served} == {"sync-error",
                                                                           "analysis"}


@pytest.mark.rule("API-6")
def test_exo_core_loopir_serves_the_debug_log_only() -> None:
    with upstream_aliases():
        from exo.core.LoopIR import get_global_debug_log, set_global_debug_log_path  # noqa
        import exo.core.LoopIR as loopir
        with pytest.raises(ImportError, match="exo.core.LoopIR.LoopIR is not part"):
            loopir.LoopIR  # upstream's IR classes are not served
    assert get_global_debug_log is debug_log.get_global_debug_log
