"""Upstream's Sm90 ThunderKittens wgmma family (specs/upstream_api.md TK-5): the accumulator and
A-operand tiles are ThunderKittens tiles with wgmma's register qual-tls, the instrs check their
keywords, unit and operand memories as upstream's do, and the kernels of tests/programs_tk
(tk_wgmma*) are proved or refuted by tests/test_examples.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.diagnostics import SporkError
from verifier.encode import verify_proc
from verifier.lang import CudaTkWarpTile, Sm90_TkRmemTileA, Sm90_TkRmemTileD
from verifier.load.load import load_procs
from verifier.results import Verdict
from verifier.semantics import rules

KERNEL = '''from verifier.lang import *

@proc
def k():
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 1):
            D: f32[4, 16, 64] @ {dmem}
            A_s: bf16[64, 64] @ Sm90_SmemSwizzled(128)
            B_s: bf16[64, 64] @ Sm90_SmemSwizzled(128)
            {call}
'''
ZERO = "Sm90_tk_zero_scale_d(D[:, :, :], D=f32, N=64)"
MMA = "Sm90_tk_mma_row_col(D[:, :, :], A_s[:, :], B_s[:, :], D=f32, A=bf16, B=bf16, N=64, K=64)"


def _outcome(tmp_path: Path, call: str, dmem: str = "Sm90_TkRmemTileD(64)") -> tuple[str, str]:
    """(verdict or error code, message) of KERNEL with `call` (ERR-P07 at load, LOAD-3)."""
    path = tmp_path / "k.py"
    path.write_text(KERNEL.format(dmem=dmem, call=call))
    try:
        (p,) = load_procs(path)
    except SporkError as e:
        return e.code or "", e.message
    result = verify_proc(p)
    if result.verdict is Verdict.rejected:
        return result.findings[0].code or "", result.findings[0].message
    return result.verdict.value, ""


@pytest.mark.rule("TK-5")
def test_tiles_are_thunderkittens_tiles_with_wgmma_quals() -> None:
    d, a = Sm90_TkRmemTileD(256), Sm90_TkRmemTileA(64)
    assert (str(d), d.name(), d.rows, d.cols, d.layout) == \
        ("Sm90_TkRmemTileD(256)", "Sm90_TkRmemTileD(256)", 16, 256, "row")
    assert "CudaTkWarpTile" in d.bases and d.packed_dims == 2 and d.is_tk
    assert d != CudaTkWarpTile(16, 256)  # the tk copies take it as a subclass (LANG-4.2)
    wgmma = rules.InstrTL.wgmma_async_instr
    assert rules.QUALS[d.family][wgmma].q0 is rules.QualTL.wgD
    assert rules.QUALS[a.family][wgmma].q0 is rules.QualTL.wgA
    assert wgmma not in rules.QUALS["rmem_tk"]  # a plain tk tile is no wgmma operand
    with pytest.raises(ValueError, match="divisible by 16"):
        Sm90_TkRmemTileD(24)


@pytest.mark.rule("TK-5")
def test_zero_then_mma_is_proved(tmp_path: Path) -> None:
    assert _outcome(tmp_path, ZERO + "\n            " + MMA) == ("proved", "")


@pytest.mark.rule("TK-5")
@pytest.mark.parametrize("call, code, words", [
    (MMA.replace("A=bf16, B=bf16", "A=f16, B=bf16"), "ERR-P07", "type combination"),
    (MMA.replace("D=f32", "D=f16"), "ERR-P07", "type combination"),
    (MMA.replace("K=64", "K=24"), "ERR-P07", "K=24 invalid"),
    (MMA.replace("N=64", "N=264"), "ERR-P07", "N=264 invalid"),
    (MMA.replace("K=64)", "K=64, swizzle=48)"), "ERR-P07", "swizzle=48"),
    (ZERO.replace("N=64", "N=40"), "ERR-P07", "N=40"),
])
def test_bad_template_keywords(tmp_path: Path, call: str, code: str, words: str) -> None:
    got, message = _outcome(tmp_path, ZERO + "\n            " + call)
    assert got == code and words in message, message


@pytest.mark.rule("TK-5")
@pytest.mark.parametrize("call, dmem, code, words", [
    # wgmma's D is a warpgroup's: four warps' tiles, issued by the warpgroup (COLL-3.1)
    ("for w in cuda_threads(0, 4, unit=cuda_warp):\n                " + ZERO.replace(
        "D[:, :, :]", "D[w, :, :]"), "Sm90_TkRmemTileD(64)", "ERR-A19", "cuda_warpgroup"),
    # a plain tk tile is not an accumulator (LANG-4.2)
    (ZERO, "CudaTkWarpTile(16, 64)", "ERR-A07", "Sm90_TkRmemTileD"),
    # the accumulator's width is the instr's N (LANG-4.2)
    (ZERO, "Sm90_TkRmemTileD(256)", "ERR-A07", "got an argument in Sm90_TkRmemTileD(256)"),
])
def test_operand_rules(tmp_path: Path, call: str, dmem: str, code: str, words: str) -> None:
    got, message = _outcome(tmp_path, call, dmem)
    assert got == code and words in message, message
