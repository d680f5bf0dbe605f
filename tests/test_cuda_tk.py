"""ThunderKittens names, memories and static rules (specs/upstream_api.md TK-1..TK-3): upstream's
`exo.platforms.cuda_tk` loads unchanged, its advice and memories are upstream's, and the rules
on packed shapes, window variables, keywords and aliased arguments reject as upstream does."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.diagnostics import SporkError
from verifier.encode import verify_proc
from verifier.lang import (
    CudaTkWarpTile, CudaTkWarpVec, Sm90_SmemSwizzled, cuda_tk_load_rs_advice,
    cuda_tk_load_rs_inner_cols_32, cuda_tk_store_rs_advice, cuda_tk_store_rs_inner_cols_16, f16,
    f32)
from verifier.lang.stdlib.cuda_tk_ops import TILE_OPS, VEC_OPS
from verifier.load.load import load_procs
from verifier.load.upstream_modules import upstream_aliases
from verifier.results import Verdict

KERNEL = '''
@proc
def k():
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            {alloc}
            for w in cuda_threads(0, 2, unit=cuda_warp):
                {call}
'''


def _verdict(tmp_path: Path, alloc: str, call: str, head: str = "from verifier.lang import *"):
    path = tmp_path / "k.py"
    path.write_text(head + "\n" + KERNEL.format(alloc=alloc, call=call))
    (p,) = load_procs(path)
    return verify_proc(p)


def _rejection(tmp_path: Path, text: str) -> tuple[str, str]:
    """(code, message) of the rejection of a kernel file: at load (an instr's keywords are
    checked when the proc is built, LOAD-3) or by the static rules."""
    path = tmp_path / "k.py"
    path.write_text("from verifier.lang import *\n" + text)
    try:
        (p,) = load_procs(path)
    except SporkError as e:
        return e.code, e.message
    result = verify_proc(p)
    assert result.verdict is Verdict.rejected, result
    return result.findings[0].code or "", result.findings[0].message


@pytest.mark.rule("TK-1")
def test_advice_is_upstreams() -> None:
    load = cuda_tk_load_rs_advice(160, 64, dst=f16, src=f32, swizzle=128)
    assert load.instr == cuda_tk_load_rs_inner_cols_32(outer_cols=2, rows=160, dst=f16, src=f32)
    assert (load.rmem, load.smem, load.swizzle_elements) == \
        (CudaTkWarpTile(160, 64, "row"), Sm90_SmemSwizzled(128), 32)
    store = cuda_tk_store_rs_advice(160, 64, dst=f16, src=f32, swizzle=32)
    assert store.instr == cuda_tk_store_rs_inner_cols_16(outer_cols=4, rows=160, dst=f16, src=f32)
    assert store.swizzle_elements == 16
    with pytest.raises(ValueError, match="divisible by 32"):
        cuda_tk_load_rs_advice(160, 48, dst=f16, src=f32, swizzle=128)


@pytest.mark.rule("TK-1")
def test_tile_memories() -> None:
    tile = CudaTkWarpTile(16, 256)
    assert tile == CudaTkWarpTile(16, 256, "row") and tile.name() == "CudaTkWarpTile(16, 256, 'row')"
    assert tile.row_vec == CudaTkWarpVec(256, "align") and tile.col_vec == CudaTkWarpVec(16, "ortho")
    col = CudaTkWarpTile(16, 256, "col")
    assert col.row_vec == CudaTkWarpVec(256, "ortho") and col.col_vec == CudaTkWarpVec(16, "align")
    assert (tile.rows, tile.cols, tile.layout) == (16, 256, "row")
    for bad in ((17, 32), (16, 32, "all")):
        with pytest.raises(ValueError):
            CudaTkWarpTile(*bad)  # type: ignore[arg-type]
    assert len(TILE_OPS) == 75 and len(VEC_OPS) == 46  # upstream's counts, aliases included


@pytest.mark.rule("TK-1")
def test_upstream_modules_serve_the_tk_names(tmp_path: Path) -> None:
    head = ("from __future__ import annotations\nfrom exo import *\n"
            "from exo.platforms.cuda import *\nfrom exo.platforms.cuda_tk import *\n"
            "from exo.platforms.kittens_impl.tk_tile_ops import cuda_tk_tile_zero")
    result = _verdict(tmp_path, "t: f32[2, 16, 32] @ CudaTkWarpTile(16, 32)",
                      "cuda_tk_tile_zero(t[w, :, :], rows=16, cols=32, dst=f32)", head)
    assert result.verdict is Verdict.proved, result.findings
    with upstream_aliases():
        import exo.platforms.cuda_tk as cuda_tk
        assert cuda_tk.cuda_tk_tile_pos_inf is cuda_tk.cuda_tk_tile_pos_infty


IN_A_LOOP = """
@proc
def k():
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            for w in cuda_threads(0, 2, unit={unit}):
                r: f32{shape} @ {mem}
                pass
"""


@pytest.mark.rule("LANG-6.4")
@pytest.mark.parametrize("shape, mem, unit, problem", [
    ("[256]", "CudaTkWarpTile(64, 256)", "cuda_warp", "must be at least 2-dimensional"),
    ("[32, 256]", "CudaTkWarpTile(64, 256)", "cuda_warp",
     "[32, 256] packed tensor shape not supported; expect (64, 256)"),
    ("[2, 8]", "CudaTkWarpVec(16, 'ortho')", "cuda_warp",
     "[8] packed tensor shape not supported; expect (16,)"),
    ("", "CudaRmemPacked32", "cuda_thread", "must be at least 1-dimensional"),
    ("[2, 8, 4]", "Sm80_RmemMatrixB(8, 4)", "cuda_warp",  # (N, K) packs (K, N)
     "[8, 4] packed tensor shape not supported; expect (4, 8)"),
])
def test_packed_shape(tmp_path: Path, shape: str, mem: str, unit: str, problem: str) -> None:
    code, message = _rejection(tmp_path, IN_A_LOOP.format(shape=shape, mem=mem, unit=unit))
    assert code == "ERR-A10" and problem in message and message.startswith("r: f32")


@pytest.mark.rule("LANG-6.4")
def test_the_sm80_b_fragment_packs_k_then_n(tmp_path: Path) -> None:
    """sporkbench's Sm80 GEMMs allocate `f32[..., 4, 8] @ Sm80_RmemMatrixB(8, 4)`."""
    path = tmp_path / "k.py"
    path.write_text("from verifier.lang import *\n" + IN_A_LOOP.format(
        shape="[2, 4, 8]", mem="Sm80_RmemMatrixB(8, 4)", unit="cuda_warp"))
    (p,) = load_procs(path)
    assert verify_proc(p).verdict is Verdict.vacuous  # accepted; no access to prove


@pytest.mark.rule("TK-1")
def test_no_window_variable_of_a_tile(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text("from verifier.lang import *\n\n\n@proc\ndef k(t: [f32][64, 256] @ "
                    "CudaTkWarpTile(64, 256)):\n    with CudaDeviceFunction(blockDim=64):\n"
                    "        for task in cuda_tasks(0, 1):\n            pass\n")
    (p,) = load_procs(path)
    finding = verify_proc(p).findings[0]
    assert finding.code == "ERR-A10" and "no WindowEncoder" in finding.message


@pytest.mark.rule("TK-1")
@pytest.mark.parametrize("call, problem", [
    ("cuda_tk_tile_zero(t[w, :, :], rows=16, cols=32, dst=f64)", "element type f64"),
    ("cuda_tk_tile_zero(t[w, :, :], rows=16, cols=32, dst=f32, layout='diag')", "layout"),
    ("cuda_tk_tile_copy(t[w, :, :], u[w, :, :], rows=16, cols=24, dst=f32, src=f32)",
     "multiples of 16"),
    ("cuda_tk_tile_add_3op(t[w, :, :], u[w, :, :], v[w, :, :], rows=16, cols=32, dst=f32, "
     "lhs=f16, rhs=f32)", "must be the same"),
])
def test_bad_template_keywords(tmp_path: Path, call: str, problem: str) -> None:
    alloc = "\n            ".join(f"{n}: f32[2, 16, 32] @ CudaTkWarpTile(16, 32)" for n in "tuv")
    code, message = _rejection(tmp_path, KERNEL.format(alloc=alloc, call=call))
    assert code == "ERR-P07" and problem in message


@pytest.mark.rule("TK-1")
@pytest.mark.parametrize("stmt, problem", [
    ("t[w, 0, 0] = 1.0", "cannot write to buffer 't'"),
    ("t[w, 0, 0] += 1.0", "cannot reduce to buffer 't'"),
    ("for lane in cuda_threads(0, 32):\n                    y[lane] = t[w, 0, lane]",
     "cannot read from buffer 't'"),
])
def test_no_element_access_of_a_tile(tmp_path: Path, stmt: str, problem: str) -> None:
    text = KERNEL.format(alloc="t: f32[2, 16, 32] @ CudaTkWarpTile(16, 32)\n"
                         "            y: f32[32] @ CudaSmemLinear", call=stmt)
    code, message = _rejection(tmp_path, text)
    assert code == "ERR-A01" and problem in message
