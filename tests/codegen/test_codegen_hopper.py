"""Lowering of the Hopper constructs (semantics.md SEM-8.2..8.6, language.md LANG-6.3, LANG-6.6):
TMA loads, stores, reductions and multicast through host-encoded tensor maps, mbarrier
expect-tx, wgmma with fences and commit groups, cluster-wide mbarriers, swizzled SMEM; and the
sm_90a build of every such file.

The kernels (codegen_hopper.py) are certified by hand until the verifier proves Sm90 programs.
"""

from __future__ import annotations

import difflib
import re
import shutil
from pathlib import Path

import pytest
from codegen_support import HERE, hand_certified
from test_codegen_nvcc import compile_each, compile_together, file_target, nvcc, write_files

from verifier.codegen import emit_cuda
from verifier.diagnostics import RejectedInput, Unsupported
from verifier.lang.ir import ir
from verifier.load.load import load_procs

HOPPER = HERE / "codegen_hopper.py"
NAMES = [p.name for p in load_procs(HOPPER)]


def hopper(name: str) -> str:
    return emit_cuda(*hand_certified(HOPPER, name))


def _in_order(text: str, parts: list[str]) -> bool:
    """Every part occurs in `text`, in this order."""
    found = [text.index(x) for x in parts]
    return found == sorted(found)


def _task(text: str, name: str) -> str:
    start = text.index(f"void exo_deviceTask{name}(")
    return text[start:text.index("\n    }\n", start)]


@pytest.mark.rule("LANG-6.6")
def test_tensor_map_encoded_on_the_host_and_passed_by_value() -> None:
    text = hopper("gemm_tma_wgmma")
    assert "#include <cudaTypedefs.h>" in text
    assert 'cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled"' in text
    # dims, strides (bytes) and box innermost first; the host window's extents are the dims
    assert "const cuuint64_t exo_dims[2] = {static_cast<cuuint64_t>(K), " \
        "static_cast<cuuint64_t>(M)};" in text
    assert "const cuuint64_t exo_strides[1] = {static_cast<cuuint64_t>((sizeof(float)) * K)};" \
        in text
    assert "const cuuint32_t exo_box[2] = {32u, 128u};" in text
    assert "CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, A, exo_dims, exo_strides, exo_box, " \
        "CU_TENSOR_MAP_SWIZZLE_128B);" in text
    assert "CUtensorMap A_map;" in text and "exo_args.A_map = A_map;" in text
    assert "const __grid_constant__" in text  # the descriptor lives in kernel parameter space


@pytest.mark.rule("SEM-8.6")
def test_tma_load_expects_bytes_on_the_current_ring_slot() -> None:
    text = hopper("gemm_tma_wgmma")
    producer = _task(text, "_producer")
    # one elected lane posts the box's bytes, then copies; the slot is raw's ArriveIdx (not
    # advanced: the warp's Arrive that follows advances it)
    assert "exo_Sm90_tmaLoad<2>((A_s + (k % 4) * 4096), &exo_deviceArgs.A_map, " \
        "{static_cast<int32_t>((32 * k)), static_cast<int32_t>((128 * exo_task.tm))}, " \
        "static_cast<uint32_t>(__cvta_generic_to_shared(exo_smem + 131072)) + 8u * " \
        "(exo_syncState.raw_arriveIdx), 16384u);" in producer
    assert producer.index("exo_Sm90_tmaLoad<2>((B_s") < \
        producer.index("exo_syncState.raw_arriveIdx = (exo_syncState.raw_arriveIdx + 1u) % 3u;")
    assert "mbarrier.expect_tx.relaxed.cta.shared::cta.b64" in text
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile." \
        "mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" in text
    assert "elect.sync _|exo_p, 0xffffffff;" in text
    # the ring (depth 3 = war's lag + raw's): the producer warp's 32 arrivals and the
    # transactions complete a phase
    assert "// raw: 1 x ring of depth 3 at exo_smem + 131072, arrival count 32" in text


@pytest.mark.rule("SEM-8.2")
@pytest.mark.rule("SEM-8.4")
def test_wgmma_fence_commit_and_wait() -> None:
    text = hopper("gemm_tma_wgmma")
    consumer = _task(text, "_consumer")
    order = ['asm volatile("wgmma.fence.sync.aligned;" ::: "memory");',
             "exo_Sm90_wgmmaTf32_n128(D->r + 0, exo_Sm90_smemDesc128(",
             "D->scale_d = 1;",
             'asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");',
             'asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");',
             "exo_Sm90_fenceAccum(D, 1);"]
    assert _in_order(consumer, order)
    assert "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " in text
    assert "exo_Sm90_AccumD<64, 128> D[1];" in consumer  # wg is distributed: one per warpgroup
    assert "exo_Sm90_storeD<64, 128, false>(" in consumer


@pytest.mark.rule("LANG-8.4")
def test_setmaxnreg_per_warp_name() -> None:
    text = hopper("gemm_tma_wgmma")
    assert 'EXO_SETMAXNREG("setmaxnreg.dec.sync.aligned.u32 40;");' in text
    assert 'EXO_SETMAXNREG("setmaxnreg.inc.sync.aligned.u32 232;");' in text


@pytest.mark.rule("SEM-8.2")
def test_wgmma_fence_before_accumulator_reuse() -> None:
    text = _task(hopper("s9_accumulator_reuse"), "")
    store = text.index("exo_Sm90_storeD<64, 64, false>(")
    assert _in_order(text[store:], ['asm volatile("wgmma.fence.sync.aligned;" ::: "memory");',
                                    "D->scale_d = 0;"])
    assert "exo_Sm90_storeD<64, 64, true>(" in text  # the column-major store


@pytest.mark.rule("SEM-8.4")
@pytest.mark.rule("SEM-8.6")
def test_tma_store_and_reduce_bulk_groups() -> None:
    text = hopper("s10_tma_store")
    task = _task(text, "")
    order = ['asm volatile("fence.proxy.async;" ::: "memory");',
             "exo_Sm90_tmaStore<2, false>(&exo_deviceArgs.C_map, ",
             'asm volatile("cp.async.bulk.commit_group;" ::: "memory");',
             'asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");', "__syncwarp();"]
    assert _in_order(task, order)
    assert "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" \
        in text
    reduce = hopper("s10_tma_reduce")
    # a point in an extent-1 box dimension: coordinate task % 4, box (1, 32, 32), rank 3
    assert "exo_Sm90_tmaStore<3, true>(&exo_deviceArgs.C_map, {static_cast<int32_t>(0), " \
        "static_cast<int32_t>(0), static_cast<int32_t>((exo_task.task % 4))}, C_s);" in reduce
    assert "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group" in reduce


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("SEM-8.6")
@pytest.mark.rule("COLL-5.12")
def test_multicast_tma_and_arrive() -> None:
    text = hopper("gemm_multicast")
    producer = _task(text, "_producer")
    assert "const uint32_t exo_cta = blockIdx.x % 2u / 1u % 2u;" in producer
    assert "exo_ctaMask = static_cast<uint16_t>(3u << (blockIdx.x % 2u - exo_cta * 1u));" \
        in producer
    # each CTA loads its half of the rows into every CTA and expects the whole tile's bytes
    assert "exo_Sm90_tmaLoadMulticast<2>((B_s + (k % 2) * 2048) + exo_cta * 1024, " \
        "&exo_deviceArgs.B_map, {static_cast<int32_t>((32 * k)), " \
        "static_cast<int32_t>(0 + exo_cta * 32)}" in producer
    assert ", 8192u, exo_ctaMask);" in producer
    assert ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" in text
    # raw[c] >> raw[:]: the own CTA once, the peer through mapa; 2 x 32 arrivals per phase
    assert "exo_mbarrierArriveRemote(exo_bar, exo_rank ^ 1u);" in producer
    assert "mapa.shared::cluster.u32" in text
    assert "// raw: 1 x ring of depth 1 at exo_smem + 32768, arrival count 64" in text
    assert "fence.mbarrier_init.release.cluster;" in text


@pytest.mark.rule("SEM-8.5")
def test_multicast_arrive_on_a_cta_grid() -> None:
    # bar[m, :] >> bar[:, n] in a 2 x 2 cluster: own rank, its row peer and its column peer
    text = hopper("s14_multicast_arrive")
    assert "exo_mbarrierArriveRemote(exo_bar, exo_rank ^ 1u);" in text
    assert "exo_mbarrierArriveRemote(exo_bar, exo_rank ^ 2u);" in text
    assert "exo_rank ^ 3u" not in text
    assert "arrival count 384" in text  # 128 threads x 3 CTAs


@pytest.mark.rule("CG-X1", "LANG-4.4")
def test_unsafe_no_shutdown_cluster_sync_drops_only_the_exit_barrier() -> None:
    """Upstream's keyword: the kernel ends without its cluster barrier; every other line is
    the same (the proof orders each remote access before the frees, SEM-4.7)."""
    from dataclasses import replace

    from verifier.lang.ir.printer import ir_hash
    from verifier.lang.stdlib.config import CudaDeviceFunction
    from verifier.results import Certificate

    proc, _ = hand_certified(HOPPER, "s14_multicast_arrive")
    (dev,) = [s for s in proc.body if isinstance(s, ir.DeviceFunction)]
    cfg = CudaDeviceFunction(blockDim=128, clusterDim=4, unsafe_no_shutdown_cluster_sync=True)
    unsafe = replace(proc, body=tuple(replace(s, cfg=cfg) if s is dev else s
                                      for s in proc.body))
    assert "unsafe_no_shutdown_cluster_sync=True" in cfg.call_text()
    text = emit_cuda(unsafe, Certificate(proc.name, ir_hash(unsafe), (), "hand-made", "0"))
    safe = [ln for ln in hopper("s14_multicast_arrive").splitlines() if "spork-verify" not in ln]
    lines = [ln for ln in text.splitlines() if "spork-verify" not in ln]  # header differs
    removed = [ln for ln in difflib.ndiff(safe, lines) if ln.startswith("- ")]
    added = [ln for ln in difflib.ndiff(safe, lines) if ln.startswith("+ ")]
    assert not added and [ln[2:].strip() for ln in removed] == [
        'asm volatile("barrier.cluster.arrive.release;\\n\\t"',
        '"barrier.cluster.wait.acquire;" ::: "memory");'], removed


@pytest.mark.rule("LANG-6.3")
def test_swizzled_smem_generic_access_and_alignment() -> None:
    text = hopper("swizzled_readback")
    assert "(*exo_swizzled<128>(&A_s[" in text
    assert "% 1024u;" in text  # the dynamic SMEM base is aligned for 128-byte swizzling
    assert "CU_TENSOR_MAP_SWIZZLE_128B" in text


@pytest.mark.rule("SEM-8.6")
def test_rings_a_tma_completes_on_are_released_to_the_async_proxy() -> None:
    # swizzled_readback awaits in order only, but the TMA unit updates `full`: the inits are
    # fenced for it before the CTA barrier
    text = hopper("swizzled_readback")
    setup = text[text.index("void exo_deviceSetup("):]
    assert _in_order(setup, ["mbarrier.init.shared::cta.b64",
                             'asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");',
                             'asm volatile("fence.proxy.async;" ::: "memory");',
                             'asm volatile("barrier.cta.sync 0;" ::: "memory");'])


def test_target_header_and_guard() -> None:
    assert file_target(hopper("gemm_tma_wgmma")) == "sm_90a"
    assert file_target(hopper("s10_tma_store")) == "sm_90"
    text = hopper("s9_accumulator_reuse")
    assert re.search(r'#if defined\(__CUDA_ARCH__\) && !\(defined\(__CUDA_ARCH_FEAT_SM90_ALL\)\)'
                     r'\n#error "spork-verify: s9_accumulator_reuse uses wgmma \(sm_90a\); compile with '
                     r'-arch=compute_90a -code=sm_90a,compute_90a"', text)


@pytest.mark.rule("LANG-6.6")
def test_tma_without_a_matching_tensor_map_is_unsupported(tmp_path: Path) -> None:
    source = HOPPER.read_text().replace("B_map = B[:, :] @ Sm90_tensorMap(128, 64, 32)",
                                        "B_map = B[:, :] @ Sm90_tensorMap(64, 64, 16)")
    (tmp_path / "k.py").write_text(source)
    with pytest.raises((Unsupported, RejectedInput), match="B_map|Sm90_tensorMap") as err:
        emit_cuda(*hand_certified(tmp_path / "k.py", "s9_accumulator_reuse"))
    assert err.value.loc.line > 0


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_hopper_kernels_compile_for_sm_90a(tmp_path: Path) -> None:
    compile_together(tmp_path, {name: hopper(name) for name in NAMES}, "sm_90a")


@pytest.mark.slow
@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
def test_each_hopper_kernel_compiles_alone_for_sm_90a(tmp_path: Path) -> None:
    compile_each(write_files(tmp_path, {name: hopper(name) for name in NAMES}), "sm_90a")


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
def test_wgmma_file_for_sm_80_stops_with_the_flags(tmp_path: Path) -> None:
    source = tmp_path / "s9.cu"
    source.write_text(hopper("s9_accumulator_reuse"))
    result = nvcc(source, "sm_80")
    assert result.returncode != 0
    assert "compile with -arch=compute_90a -code=sm_90a,compute_90a" in result.stderr


@pytest.mark.rule("LANG-6.6")
def test_f32_tma_through_a_map_of_other_elements_is_rejected(tmp_path: Path) -> None:
    # the expect-tx count is verified in f32 elements; an f16 map would move half the bytes
    source = HOPPER.read_text().replace(
        "def swizzled_readback(T: size, A: f32[T, 64, 32]",
        "def swizzled_readback(T: size, A: f16[T, 64, 32]")
    (tmp_path / "k.py").write_text(source)
    with pytest.raises(RejectedInput, match="moves f32 elements, but A_map has __half") as err:
        emit_cuda(*hand_certified(tmp_path / "k.py", "swizzled_readback"))
    assert err.value.code == "ERR-L06"
