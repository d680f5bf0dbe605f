"""CUDA of upstream's Sm90 ThunderKittens wgmma family (specs/codegen.md TK-CG-1..TK-CG-6): the
accumulator tile with its scale-d flag, one `wgmma.mma_async` per 32 bytes of K with the
fragment registers of ThunderKittens' row tiles and SMEM matrix descriptors, and the fence
order (register pins, `wgmma.fence`, the mma, `commit_group`, `wait_group`, pins). Each kernel
here is proved first (a real certificate); nvcc builds them for sm_90a against ThunderKittens'
headers when $THUNDERKITTENS_INCLUDE names its `include` folder, and the PTX it emits keeps
the order."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from codegen_support import example, hand_certified
from test_codegen_nvcc import NVCC
from test_codegen_tk import TK_INCLUDE, needs_tk

from verifier.codegen import emit_cuda
from verifier.codegen.targets import NVCC_FLAGS, TK_FLAGS
from verifier.diagnostics import Unsupported
from verifier.encode import Options, verify_proc
from verifier.load.load import load_procs
from verifier.results import Verdict

KERNEL = '''from verifier.lang import *


@proc
def {name}():
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 1):
            D: {d}[4, 16, {n}] @ Sm90_TkRmemTileD({n})
            {a_alloc}
            B_s: {ab}[{b_shape}] @ Sm90_SmemSwizzled({swizzle})
            cg: barrier @ Sm90_WgmmaCommitGroup
            Sm90_tk_zero_scale_d(D[:, :, :], D={d}, N={n})
            Fence(wgmma_fence_1, wgmma_fence_2)
            Sm90_tk_mma_{a_mode}_{b_mode}(D[:, :, :], {a_arg}, B_s[{b_window}], D={d}, A={ab}, \
B={ab}, {n_kw}, K={k}, swizzle={swizzle})
            Arrive(wgmma_async) >> cg
            Await(cg, cuda_in_order, 0)
'''

# name: (a_mode, b_mode, D, A = B, N, K, swizzle)
VARIANTS = {
    "tkw_row_col_bf16": ("row", "col", "f32", "bf16", 64, 64, 128),
    "tkw_col_row_bf16": ("col", "row", "f32", "bf16", 128, 64, 128),
    "tkw_rmem_col_f16": ("rmem", "col", "f16", "f16", 64, 64, 128),
    "tkw_row_col_tf32": ("row", "col", "f32", "f32", 64, 32, 128),
    "tkw_row_col_sw64": ("row", "col", "f32", "bf16", 32, 32, 64),
}


def _source(name: str) -> str:
    a_mode, b_mode, d, ab, n, k, swizzle = VARIANTS[name]
    if a_mode == "rmem":
        a_alloc, a_arg = f"A: {ab}[4, 16, {k}] @ Sm90_TkRmemTileA({k})", "A[:, :, :]"
    else:
        shape = f"64, {k}" if a_mode == "row" else f"{k}, 64"
        a_alloc, a_arg = f"A_s: {ab}[{shape}] @ Sm90_SmemSwizzled({swizzle})", "A_s[:, :]"
    if b_mode == "col":
        b_shape, b_window, n_kw = f"{n}, {k}", ":, :", f"N={n}"
    else:
        b_shape, b_window, n_kw = f"{n // 64}, {k}, 64", ":, :, :", f"N64={n // 64}"
    return KERNEL.format(name=name, d=d, ab=ab, n=n, k=k, swizzle=swizzle, a_mode=a_mode,
                         b_mode=b_mode, a_alloc=a_alloc, a_arg=a_arg, b_shape=b_shape,
                         b_window=b_window, n_kw=n_kw)


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every variant, proved and emitted; and tests/programs_tk/tk_wgmma.py, tk_tma_gemm*.py."""
    folder = tmp_path_factory.mktemp("tkw")
    out = {}
    for name in VARIANTS:
        path = folder / f"{name}.py"
        path.write_text(_source(name))
        (proc,) = load_procs(path)
        result = verify_proc(proc, Options(releases=True))
        assert result.verdict is Verdict.proved, [f.message for f in result.findings]
        out[name] = emit_cuda(proc, result.certificate)
    out["tk_wgmma"] = emit_cuda(*example("tk_wgmma"))
    out["tk_tma_gemm"] = emit_cuda(*example("tk_tma_gemm"))  # endgame TMA and a ring (TMA-CG)
    out["tk_tma_gemm_cluster"] = emit_cuda(*example("tk_tma_gemm_cluster"))  # multicast
    out["tma_data_ring"] = emit_cuda(*example("tma_data_ring"))  # endgame data rings (DIAL-18)
    return out


def _order(text: str, marks: list[str]) -> list[int]:
    """The positions of `marks`, each searched after the previous one (-1: missing)."""
    at, out = 0, []
    for m in marks:
        at = text.find(m, at)
        out.append(at)
        if at < 0:
            break
        at += len(m)
    return out


@pytest.mark.rule("TK-CG-1")
@pytest.mark.rule("TK-CG-4")
def test_accumulator_is_a_tile_with_scale_d(texts: dict[str, str]) -> None:
    text = texts["tk_wgmma"]
    assert "exo_tk_accumD<::kittens::rt_fl<16, 256, ::kittens::ducks::rt_layout::row>> D[1];" \
        in text
    assert "struct exo_tk_accumD : Tile" in text and '#include "kittens.cuh"' in text
    # the zeroing instr clears the flag; every wgmma reads it as its scale-d and sets it
    assert text.count("(*D).scale_d = 0;") == 2
    assert text.count('"r"((*D).scale_d));') == text.count("(*D).scale_d = 1;") == 8
    # the tk store of the accumulator takes it as a ThunderKittens tile
    assert "::kittens::warp::store(exo_tk_gmem<float>{" in text
    assert text.splitlines()[9].startswith("// nvcc target sm_90a: nvcc -std=c++20")


@pytest.mark.rule("TK-CG-2")
@pytest.mark.rule("TK-CG-3")
def test_k_major_bf16_wgmma(texts: dict[str, str]) -> None:
    text = texts["tk_wgmma"]
    # K = 64 bf16 elements: four k16 wgmmas, each 32 bytes further along the swizzled row
    assert text.count("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 ") == 8
    for k in (16, 32, 48):
        assert f"exo_tk_smemDesc<128>((A_s + {k}), 2u, 1024u)" in text
        assert f"exo_tk_smemDesc<128>((B_s + {k}), 2u, 1024u)" in text
    assert "exo_tk_smemDesc<128>(A_s, 2u, 1024u)" in text
    # 128 f32 registers, subtile t's data[0..3] in fragment order; no transposes
    regs = re.findall(r'"\+f"\(\(\*D\)\.tiles\[0\]\[(\d+)\]\.data\[(\d)\]\.([xy])\)', text)
    assert regs[:10] == [("0", "0", "x"), ("0", "0", "y"), ("0", "1", "x"), ("0", "1", "y"),
                         ("0", "2", "x"), ("0", "2", "y"), ("0", "3", "x"), ("0", "3", "y"),
                         ("1", "0", "x"), ("1", "0", "y")]
    assert len(regs) == 8 * 128
    assert "%128, %129, exo_p, 1, 1, 0, 0;" in text and "setp.ne.b32 exo_p, %130, 0;" in text


@pytest.mark.rule("TK-CG-2")
@pytest.mark.rule("TK-CG-3")
@pytest.mark.parametrize("name, instr, count, tail, descs", [
    # MN-major A and B: transposed, K slices 16 rows (16 * 128 bytes) apart; B's two 64-column
    # atoms are 64 * 64 elements (8192 bytes) apart: the leading byte offset
    ("tkw_col_row_bf16", "m64n128k16.f32.bf16.bf16", 4, "1, 1, 1, 1",
     ["exo_tk_smemDesc<128>((A_s + 1024), 2u, 1024u)",
      "exo_tk_smemDesc<128>((B_s + 2048), 8192u, 1024u)"]),
    # A from registers: four packed registers of subtile k, no imm-trans-a
    ("tkw_rmem_col_f16", "m64n64k16.f16.f16.f16", 4, "1, 1, 0",
     ['"r"(*reinterpret_cast<const uint32_t*>(&(*A).tiles[0][3].data[3]))',
      '"+r"(*reinterpret_cast<uint32_t*>(&(*D).tiles[0][3].data[3]))']),
    # tf32: k8, no transpose operands
    ("tkw_row_col_tf32", "m64n64k8.f32.tf32.tf32", 4, "1, 1;",
     ["exo_tk_smemDesc<128>((A_s + 24), 4u, 1024u)"]),
    # 64-byte swizzle: rows of 32 bf16, 8 rows = 512 bytes
    ("tkw_row_col_sw64", "m64n32k16.f32.bf16.bf16", 2, "1, 1, 0, 0",
     ["exo_tk_smemDesc<64>((B_s + 16), 2u, 512u)"]),
])
def test_operand_modes(texts: dict[str, str], name: str, instr: str, count: int, tail: str,
                       descs: list[str]) -> None:
    text = texts[name]
    assert text.count(f"wgmma.mma_async.sync.aligned.{instr} ") == count
    assert f"exo_p, {tail}" in text
    for d in descs:
        assert d in text


@pytest.mark.rule("TK-CG-3")
def test_operand_rows_not_one_swizzle_row_apart_are_refused(tmp_path: Path) -> None:
    """A [64, 64] window of a [64, 128] bf16 tile: rows 256 bytes apart, not one 128-byte
    swizzle row; the descriptor cannot describe it (upstream checks this when it emits code)."""
    source = _source("tkw_row_col_bf16").replace("A_s: bf16[64, 64]", "A_s: bf16[64, 128]") \
        .replace("A_s[:, :]", "A_s[:, 0:64]")
    path = tmp_path / "wide.py"
    path.write_text(source)
    with pytest.raises(Unsupported, match=r"strides \[\.\.\., 64, 1\].*not \['128', '1'\]") as err:
        emit_cuda(*hand_certified(path, "tkw_row_col_bf16"))
    assert err.value.code == "ERR-L06"
    assert (err.value.loc.file, err.value.loc.line) == (str(path), 14)  # the mma's line


@pytest.mark.rule("TK-CG-5")
@pytest.mark.rule("SEM-8.2")
@pytest.mark.rule("SEM-8.4")
def test_fence_order(texts: dict[str, str]) -> None:
    text = texts["tk_wgmma"]
    marks = ["(*D).scale_d = 0;", "exo_tk_pin(D, 1);", "wgmma.fence.sync.aligned;",
             "wgmma.mma_async", "wgmma.commit_group.sync.aligned;",
             "wgmma.wait_group.sync.aligned 0;", "exo_tk_pin(D, 1);", "::kittens::warp::store",
             "exo_tk_pin(D, 1);", "wgmma.fence.sync.aligned;", "(*D).scale_d = 0;",
             "wgmma.mma_async", "wgmma.commit_group.sync.aligned;",
             "wgmma.wait_group.sync.aligned 0;", "exo_tk_pin(D, 1);", "::kittens::warp::store"]
    assert min(_order(text, marks)) >= 0, _order(text, marks)


@pytest.mark.nvcc
@pytest.mark.rule("TK-CG-6")
@needs_tk
def test_compiles_for_sm90a_and_ptx_keeps_the_order(texts: dict[str, str],
                                                    tmp_path: Path) -> None:
    for name, text in texts.items():
        (tmp_path / f"{name}.cu").write_text(text)
    unit = tmp_path / "unit.cu"
    unit.write_text("".join(f'#include "{name}.cu"\n' for name in texts))
    flags = [f if f != "THUNDERKITTENS/include" else TK_INCLUDE for f in TK_FLAGS]
    build = subprocess.run([str(NVCC), *flags, *NVCC_FLAGS["sm_90a"], "-c", str(unit), "-o",
                            str(tmp_path / "unit.o")], capture_output=True, text=True,
                           timeout=900)
    assert build.returncode == 0, build.stderr[-4000:]
    assert "warning" not in build.stderr, build.stderr[-4000:]
    ptx = subprocess.run([str(NVCC), *flags, "-arch=compute_90a", "-ptx",
                          str(tmp_path / "tk_wgmma.cu"), "-o", str(tmp_path / "tk_wgmma.ptx")],
                         capture_output=True, text=True, timeout=900)
    assert ptx.returncode == 0, ptx.stderr[-4000:]
    lines = [x.strip().split()[0] for x in (tmp_path / "tk_wgmma.ptx").read_text().splitlines()
             if x.strip().startswith("wgmma.")]
    one = ["wgmma.fence.sync.aligned;"] + \
        ["wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"] * 4 + \
        ["wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned"]
    assert lines == one + one, lines
