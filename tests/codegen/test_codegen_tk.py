"""CUDA of the ThunderKittens tiles, vectors and instrs (TK-4): one `::kittens::warp::` call
per instr, register tiles as ThunderKittens types, GMEM and swizzled SMEM windows through the
emitted adaptors; compiled with nvcc against ThunderKittens' headers when
$THUNDERKITTENS_INCLUDE names their `include` folder (ThunderKittens is not a dependency)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from codegen_support import example, hand_certified
from test_codegen_nvcc import NVCC

from verifier.codegen import emit_cuda
from verifier.codegen.targets import NVCC_FLAGS, TK_FLAGS
from verifier.lang.stdlib.cuda_tk_ops import TILE_OPS, VEC_OPS

TK_INCLUDE = os.environ.get("THUNDERKITTENS_INCLUDE", "")
needs_tk = pytest.mark.skipif(
    NVCC is None or not Path(TK_INCLUDE, "kittens.cuh").is_file(),
    reason="nvcc or ThunderKittens' headers ($THUNDERKITTENS_INCLUDE) not found")


@pytest.mark.rule("TK-4")
def test_rotate_lowers_to_thunderkittens_calls() -> None:
    text = emit_cuda(*example("tk_rotate"))
    assert '#include "kittens.cuh"' in text
    assert "-std=c++20 --extended-lambda" in text.splitlines()[0] or \
        "-std=c++20 --extended-lambda" in text
    # one register tile per warp, the copies and the map on the warp's own tiles
    assert "::kittens::rt_fl<16, 32, ::kittens::ducks::rt_layout::row> tile[1];" in text
    assert "::kittens::warp::relu((*out), (*tile));" in text
    assert "exo_tk_smem_tile<float, 64, 16, 32, 128>((smem + (16 * ((exo_32thr_w + 1) % 4))" \
        " * 32))" in text
    assert "::kittens::warp::load((*tile), exo_tk_s);" in text


@pytest.mark.rule("TK-4")
def test_rowsum_lowers_reductions_and_vector_stores() -> None:
    text = emit_cuda(*example("tk_rowsum"))
    assert "::kittens::rv_fl<16, ::kittens::ducks::rv_layout::ortho> acc[1];" in text
    assert "::kittens::warp::row_sum((*acc), (*tile), (*acc));" in text
    assert "::kittens::warp::mul((*tile), (*tile), exo_deviceArgs.alpha);" in text
    assert "::kittens::sv<float, 16>*>" in text and "make_causal" in text


def _operands(name: str, kind: str) -> str:
    """Arguments of one call of op `name` on the all-ops kernel's warp-owned tiles."""
    instr = (TILE_OPS | VEC_OPS)[name]
    args = []
    for p in instr.params:
        if p.kind == "index":
            args.append("16")
        elif p.kind == "scalar":
            args.append("alpha")
        elif p.formal_mem == "CudaTkWarpTile":
            args.append({"dst": "a", "lhs": "b", "rhs": "c", "src": "b"}[p.name] + "[w, :, :]")
        elif kind == "tile":  # the vector of a row (col) op: one element per row (column)
            args.append(("rv" if "row" in name else "cv") + "[w, :]")
        else:
            args.append({"dst": "v", "lhs": "u", "rhs": "x", "src": "u"}[p.name] + "[w, :]")
    kws = {"tile": "rows=16, cols=32", "vec": 'length=16, layout="ortho"'}[kind]
    if name == "cuda_tk_vec_copy_layout":
        kws = 'length=16, dst_layout="ortho", src_layout="ortho"'
    types = ", ".join(f"{k}=f32" for k in instr.precisions)
    return f"{name}({', '.join(args)}, {kws}, {types})"


def _all_ops_kernel(path: Path) -> None:
    calls = [_operands(n, "tile") for n in TILE_OPS] + [_operands(n, "vec") for n in VEC_OPS]
    body = "\n".join(" " * 16 + c for c in calls)
    path.write_text(f'''from verifier.lang import *


@proc
def tk_all_ops(alpha: f32 @ CudaGridConstant):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            a: f32[2, 16, 32] @ CudaTkWarpTile(16, 32)
            b: f32[2, 16, 32] @ CudaTkWarpTile(16, 32)
            c: f32[2, 16, 32] @ CudaTkWarpTile(16, 32)
            rv: f32[2, 16] @ CudaTkWarpVec(16, "ortho")
            cv: f32[2, 32] @ CudaTkWarpVec(32, "align")
            u: f32[2, 16] @ CudaTkWarpVec(16, "ortho")
            v: f32[2, 16] @ CudaTkWarpVec(16, "ortho")
            x: f32[2, 16] @ CudaTkWarpVec(16, "ortho")
            for w in cuda_threads(0, 2, unit=cuda_warp):
{body}
''')


@pytest.mark.nvcc
@pytest.mark.rule("TK-4")
@needs_tk
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_tk_kernels_and_every_op_compile(arch: str, tmp_path: Path) -> None:
    source = tmp_path / "tk_all_ops.py"
    _all_ops_kernel(source)
    texts = [emit_cuda(*hand_certified(source, "tk_all_ops")),
             emit_cuda(*example("tk_rotate")), emit_cuda(*example("tk_rowsum"))]
    unit = tmp_path / "unit.cu"
    for k, text in enumerate(texts):
        (tmp_path / f"k{k}.cu").write_text(text)
    unit.write_text("".join(f'#include "k{k}.cu"\n' for k in range(len(texts))))
    flags = [f if f != "THUNDERKITTENS/include" else TK_INCLUDE for f in TK_FLAGS]
    result = subprocess.run([str(NVCC), *flags, *NVCC_FLAGS[arch], "-c", str(unit), "-o",
                             str(tmp_path / "unit.o")], capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
