"""Upstream endgame's ThunderKittens wgmma GEMMs (tk_gemm_util.handwrite_gemm, built by upstream's
own rewrites) that spork-verify proves emit CUDA that nvcc builds for sm_90a (specs/codegen.md
TK-CG-*, TMA-CG-*; the whole table: benchmarks/tk_gemm_codegen.py). Needs upstream Exo-GPU of
branch akeley98/endgame in $SPORK_VERIFY_EXO_GPU_PYTHON, nvcc and ThunderKittens' headers in
$THUNDERKITTENS_INCLUDE: minutes of upstream's rewrites, so `-m slow` only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_codegen_nvcc import NVCC
from test_codegen_tk import TK_INCLUDE

from verifier.load.load_scheduled import ENV_VAR

ROOT = Path(__file__).resolve().parents[2]
PYTHON = os.environ.get(ENV_VAR, "")

pytestmark = [
    pytest.mark.slow, pytest.mark.nvcc,
    pytest.mark.skipif(not PYTHON, reason=f"upstream Exo-GPU (endgame) not named by ${ENV_VAR}"),
    pytest.mark.skipif(NVCC is None or not Path(TK_INCLUDE, "kittens.cuh").is_file(),
                       reason="nvcc or ThunderKittens' headers ($THUNDERKITTENS_INCLUDE) not found"),
]


@pytest.mark.rule("TK-CG-6")
@pytest.mark.rule("TMA-CG-2")
def test_proved_upstream_gemms_build(tmp_path: Path) -> None:
    # one bf16 split-K kernel on a 2-CTA cluster (multicast TMA, a TMA reduce epilogue) and one
    # tf32 kernel proved with --assume K_split=1, as upstream's tests run it
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "tk_gemm_codegen.py"), PYTHON,
                          "--thunderkittens", TK_INCLUDE, "--out", str(tmp_path), "--only",
                          "split_k_positive", "m1n1_A"], capture_output=True, text=True,
                         timeout=3600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "# 2 of 2 emit CUDA that nvcc builds for sm_90a" in run.stdout, run.stdout
    text = (tmp_path / "split_k_positive.cu").read_text()
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16" in text
    assert "exo_Sm90_tmaLoadMulticast<4>" in text
