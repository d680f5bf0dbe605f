"""Warp-specialised cluster GEMMs in the shape of sporkbench's Sm90a kernels (codegen_sm90a_gemm.py):
4-dimensional tensor maps with extent-1 box dimensions, multicast TMA along cluster rows and
columns, multicast Arrives, wgmma with `wait_group 1`, register and TMA epilogues, split-K
reduction; and the sm_90a build of each configuration.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from codegen_support import HERE, hand_certified
from test_codegen_nvcc import compile_each, compile_together, write_files

from verifier.codegen import emit_cuda
from verifier.diagnostics import Unsupported
from verifier.load.load import load_procs

GEMMS = HERE / "codegen_sm90a_gemm.py"
TOO_BIG = "gemm_m128n256_reduce_2x2"  # ring and staging tile do not fit together
NAMES = [p.name for p in load_procs(GEMMS) if not p.name.startswith(TOO_BIG)]


def gemm(name: str) -> str:
    return emit_cuda(*hand_certified(GEMMS, name))


@pytest.mark.rule("LANG-6.6")
def test_rank4_tensor_maps_with_unit_box_dimensions() -> None:
    text = gemm("gemm_m128n256_rmem_2x2")
    assert "const cuuint64_t exo_dims[4] = {static_cast<cuuint64_t>(KC), " \
        "static_cast<cuuint64_t>(KS), static_cast<cuuint64_t>(M), static_cast<cuuint64_t>(L)};" \
        in text
    assert "const cuuint32_t exo_box[4] = {32u, 1u, 64u, 1u};" in text  # A: 128 rows / 2 CTAs
    assert "const cuuint32_t exo_box[4] = {32u, 1u, 128u, 1u};" in text  # B: 256 rows / 2 CTAs
    # the points l and ks of the window are coordinates of extent-1 box dimensions
    assert "{static_cast<int32_t>((k * 32)), static_cast<int32_t>(exo_task.ks), " \
        "static_cast<int32_t>((((2 * exo_task.tm) + exo_768thr_r) * 128) + exo_cta * 64), " \
        "static_cast<int32_t>(exo_task.l)}" in text
    assert "// c_map: a tensor map no TMA goes through, not encoded (LANG-6.6)" in text


@pytest.mark.rule("SEM-8.6")
@pytest.mark.rule("COLL-5.12")
def test_row_and_column_multicast_in_a_2x2_cluster() -> None:
    text = gemm("gemm_m128n256_rmem_2x2")
    # A along the row (ranks 2r, 2r + 1), B along the column (ranks c, c + 2)
    assert "const uint32_t exo_cta = blockIdx.x % 4u / 1u % 2u;" in text
    assert "exo_ctaMask = static_cast<uint16_t>(3u << (blockIdx.x % 4u - exo_cta * 1u));" in text
    assert "const uint32_t exo_cta = blockIdx.x % 4u / 2u % 2u;" in text
    assert "exo_ctaMask = static_cast<uint16_t>(5u << (blockIdx.x % 4u - exo_cta * 2u));" in text
    assert ", 16384u, exo_ctaMask);" in text and ", 32768u, exo_ctaMask);" in text
    # full[r, :] >> full[:, c]: own, row peer, column peer; 3 x 32 producer arrivals per phase
    assert "// full: 1 x ring of depth 3 at exo_smem + 196608, arrival count 96" in text
    assert "// empty: 1 x ring of depth 3 at exo_smem + 196632, arrival count 768" in text


@pytest.mark.rule("SEM-8.5")
def test_one_cta_row_is_not_a_multicast() -> None:
    # cols = 1: `a_s[r, :, ...]` and `full[r, :]` span one CTA; the Arrive stays local in the
    # column-free direction and the A multicast reaches the issuing CTA only
    text = gemm("gemm_m128n256_rmem_2x1")
    assert "exo_mbarrierArriveRemote(exo_bar, exo_rank ^ 1u);" in text  # the column peer
    assert "exo_rank ^ 2u" not in text
    assert "// full: 1 x ring of depth 3 at exo_smem + 196608, arrival count 64" in text


@pytest.mark.rule("SEM-8.4")
def test_wait_group_one_then_zero() -> None:
    text = gemm("gemm_m128n256_rmem_1x1")
    one = text.index('asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");')
    zero = text.index('asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");')
    assert one < zero
    assert "if ((k >= 1)) {" in text


@pytest.mark.rule("SEM-8.4")
@pytest.mark.rule("LANG-6.5")
def test_split_k_reduces_into_zeroed_output() -> None:
    text = gemm("gemm_m128n128_reduce_2x1")
    assert "for (int64_t exo_i0 = 0; exo_i0 < L; exo_i0++) {\n" \
        "        EXO_CUDA_CHECK(cudaMemset2DAsync((C + exo_i0 * (N * M)), sizeof(float) * M, 0, " \
        "sizeof(float) * M, N, exo_cudaStream));" in text
    assert "exo_Sm90_tmaStore<3, true>(&exo_deviceArgs.c_map, " in text
    assert "exo_Sm90_storeD<64, 128, true>(" in text


@pytest.mark.rule("LANG-8.3")
def test_ring_and_staging_over_the_smem_limit_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="328752 bytes of shared memory exceed the 232448-byte "
                       "limit .*SEM-4.7") as err:
        gemm(TOO_BIG)
    assert err.value.loc.line > 0


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_cluster_gemm_compiles_for_sm_90a(tmp_path: Path) -> None:
    compile_together(tmp_path, {"gemm": gemm("gemm_m128n256_rmem_2x2")}, "sm_90a")


@pytest.mark.slow
@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
def test_every_gemm_configuration_compiles_alone_for_sm_90a(tmp_path: Path) -> None:
    compile_each(write_files(tmp_path, {name: gemm(name) for name in NAMES}), "sm_90a")
