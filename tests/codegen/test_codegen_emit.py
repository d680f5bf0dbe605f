"""emit_cuda on proved kernels: guards, fences, memories, task loop, launch and host code."""

from __future__ import annotations

import re

import pytest
from codegen_support import (
    certified,
    example,
    local,
    proved_params,
    unlowered_construct,
    uses_mbarriers,
)

from verifier.codegen import emit_cuda
from verifier.diagnostics import Unsupported


def _task(text: str, name: str = "exo_deviceTask") -> str:
    """The body of one task function of the emitted text."""
    start = text.index(f"void {name}(")
    end = text.index("\n    }\n", start)
    return text[start:end]


@pytest.mark.parametrize("case", proved_params())
def test_every_proved_kernel_lowers(case: tuple) -> None:
    proc, cert = certified(*case)
    try:
        text = emit_cuda(proc, cert)
    except Unsupported as err:
        construct = unlowered_construct(proc)
        assert construct is not None, err.render()
        pytest.skip(f"codegen does not lower {construct} yet")
    assert f'extern "C" void {proc.name}(cudaStream_t exo_cudaStream' in text
    assert "__global__ void __launch_bounds__(" in text
    assert "cudaLaunchKernelEx(&exo_config" in text
    if uses_mbarriers(proc):  # SEM-8.5: rings initialised, arrived on and waited on
        assert "mbarrier.init.shared::cta.b64" in text
        assert "mbarrier.try_wait.parity" in text
        assert "exo_mbarrierWait(" in text or "exo_mbarrierWaitCluster(" in text  # multicast
        # February's rings keep per-thread state; endgame's are stateless (DIAL-13)
        assert ("exo_SyncState& exo_syncState" in text) == uses_mbarriers(proc, ring=False)
    assert emit_cuda(proc, cert) == text  # deterministic


@pytest.mark.rule("COLL-4.3")
@pytest.mark.rule("LANG-8.5")
def test_thread_loop_guards_smem_matmul() -> None:
    text = emit_cuda(*example("smem_matmul"))
    task = _task(text)
    assert "if ([[maybe_unused]] int exo_16thr_ty = threadIdx.x / 16; 1) {" in task
    assert "if ([[maybe_unused]] int exo_1thr_tx = threadIdx.x % 16; 1) {" in task
    assert "for (int_fast32_t kt = 0; kt < (exo_deviceArgs.K / 16); kt++) {" in task
    assert "A_s[exo_16thr_ty * 16 + exo_1thr_tx] = " in task


@pytest.mark.rule("COLL-4.3")
def test_guard_bounds_block_reduce() -> None:
    task = _task(emit_cuda(*example("block_reduce")))
    assert "if ([[maybe_unused]] int exo_1thr_t = threadIdx.x; exo_1thr_t < 128) {" in task
    assert "if ([[maybe_unused]] int exo_0thr_t = threadIdx.x; exo_0thr_t < 1) {" in task
    assert "s[exo_1thr_t] += s[(exo_1thr_t + 64)];" in task


@pytest.mark.rule("COLL-5.8")
@pytest.mark.rule("LANG-8.6")
def test_distributed_registers_are_stripped() -> None:
    task = _task(emit_cuda(*example("smem_matmul")))
    assert "    float acc;" in task  # acc: f32[16, 16] over (ty, tx): one scalar per thread
    assert "acc = 0.0f;" in task and "acc += " in task
    task = _task(emit_cuda(*example("register_tile")))
    assert "float r[4];" in task  # r: f32[256, 4] over t: 4 registers per thread
    assert re.search(r"r\[j_\d+\] = exo_deviceArgs\.x\[", task)


@pytest.mark.rule("LANG-8.3")
@pytest.mark.rule("LANG-8.6")
def test_smem_offsets_and_size() -> None:
    text = emit_cuda(*example("smem_matmul"))
    assert "float* const A_s = reinterpret_cast<float*>(exo_smem + 0);" in text
    assert "float* const B_s = reinterpret_cast<float*>(exo_smem + 1024);" in text
    assert "static constexpr unsigned exo_smemBytes = 2048;" in text
    assert "exo_config.dynamicSmemBytes = 2048;" in text
    assert "extern __shared__ __align__(128) char exo_smem[];" in text


@pytest.mark.rule("SEM-8.1")
def test_cta_fence() -> None:
    task = _task(emit_cuda(*example("smem_exchange")))
    assert task.count('asm volatile("barrier.cta.sync 0;" ::: "memory");') == 2
    assert "__syncthreads" not in task and "__syncwarp" not in task


@pytest.mark.rule("SEM-8.1")
def test_warp_fence() -> None:
    task = _task(emit_cuda(*local("warp_fence_tail")))
    assert "if ([[maybe_unused]] int exo_32thr_w = threadIdx.x / 32; 1) {" in task
    assert "// Fence(cuda_in_order, cuda_in_order): warp scope\n" in task
    assert "__syncwarp();" in task
    task = _task(emit_cuda(*example("block_reduce_warp_tail")))
    assert ("if ([[maybe_unused]] int CudaWarps_0_1_ = threadIdx.x; CudaWarps_0_1_ < 32) {\n"
            "            // Fence(cuda_in_order, cuda_in_order): warp scope\n"
            "            __syncwarp();") in task


@pytest.mark.rule("SEM-8.1")
def test_thread_fence_emits_no_barrier() -> None:
    from verifier.codegen.device import fence_lines
    from verifier.lang.stdlib.timelines import SyncTL
    lines = fence_lines(SyncTL.cuda_in_order, SyncTL.cuda_in_order, "thread", None)
    assert len(lines) == 1 and lines[0].startswith("//")
    lines = fence_lines(SyncTL.Sm80_generic, SyncTL.cuda_generic_and_async_proxy, "cta", None)
    assert [x.split('"')[1] for x in lines[1:]] == [
        "cp.async.wait_all;", "barrier.cta.sync 0;", "fence.proxy.async;"]
    lines = fence_lines(SyncTL.cuda_temporal, SyncTL.cuda_generic_and_async_proxy, "warp", None)
    assert lines[1:] == ["__syncwarp();"]  # temporal-only first sync-tl: no proxy fence


@pytest.mark.rule("SEM-8.1")
@pytest.mark.rule("LANG-8.2")
def test_cluster_fence_and_launch() -> None:
    text = emit_cuda(*local("cluster_exchange"))
    task = _task(text)
    assert "if ([[maybe_unused]] int exo_128thr_c = blockIdx.x % 2; 1) {" in task
    assert task.count("barrier.cluster.arrive.aligned;") == 2
    assert task.count("barrier.cluster.wait.aligned;") == 2
    assert "s[exo_1thr_t] = " in task  # s: f32[2, 128], leading dim over CTAs: shard of 128
    assert "exo_smemBytes = 512;" in text
    assert "exo_attrs[0].id = cudaLaunchAttributeClusterDimension;" in text
    assert "exo_attrs[0].val.clusterDim.x = 2;" in text
    assert "exo_smCount / 2 * 2 * 1" in text
    assert "for (int64_t exo_taskIndex = blockIdx.x / 2;" in text
    plain = emit_cuda(*example("saxpy"))
    assert "cudaLaunchAttributeClusterDimension" not in plain


@pytest.mark.rule("COLL-4.6")
@pytest.mark.rule("LANG-8.4")
def test_named_warps_dispatch() -> None:
    text = emit_cuda(*local("named_warps"))
    producer = _task(text, "exo_deviceTask_producer")
    consumer = _task(text, "exo_deviceTask_consumer")
    assert "exo_deviceArgs.x[" in producer and "exo_deviceArgs.y[" not in producer
    assert "exo_deviceArgs.y[" in consumer and "exo_deviceArgs.x[" not in consumer
    assert ("if ([[maybe_unused]] int CudaWarps_1_3_consumer = (threadIdx.x - 128); "
            "CudaWarps_1_3_consumer >= 32 && CudaWarps_1_3_consumer < 96) {") in consumer
    for task in (producer, consumer):  # code outside CudaWarps appears in both copies
        assert task.count("barrier.cta.sync 0;") == 2
    assert 'EXO_SETMAXNREG("setmaxnreg.dec.sync.aligned.u32 40;");' in text
    assert 'EXO_SETMAXNREG("setmaxnreg.inc.sync.aligned.u32 232;");' in text
    assert "if (int exo_tmp = threadIdx.x; exo_tmp >= 128 && exo_tmp < 256) {" in text
    assert text.index("exo_nreg == 40") < text.index("exo_nreg == 232")


@pytest.mark.rule("LANG-8.4")
def test_named_warps_register_allocations_maybe_unused() -> None:
    """Every named warp's task function declares the task-level allocations; the producer of
    gemm_sm80_ws never touches the consumers' accumulators D, which must not draw nvcc's
    "declared but never referenced" warning (the nvcc tests reject warnings)."""
    text = emit_cuda(*example("gemm_sm80_ws"))
    producer = _task(text, "exo_deviceTask_producer")
    consumer = _task(text, "exo_deviceTask_consumer")
    for task in (producer, consumer):
        assert "[[maybe_unused]] float D[32];" in task
    assert "exo_Sm80_mma_tf32_k8(" not in producer and "exo_Sm80_mma_tf32_k8(" in consumer
    assert "cp.async.mbarrier.arrive.noinc.shared::cta.b64" in producer
    # the commit-group workaround is gone (97647a7): the producer syncs through mbarriers alone
    assert "cp.async.commit_group;" not in producer
    plain = _task(emit_cuda(*example("smem_matmul")))  # one warp config: declarations unchanged
    assert "    float acc;" in plain and "[[maybe_unused]] float acc" not in plain


@pytest.mark.rule("LANG-8.7")
def test_cp_async_lowering() -> None:
    task = _task(emit_cuda(*local("cp_async_copy")))
    assert 'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"' in task
    assert "__cvta_generic_to_shared((s + (4 * exo_1thr_t)))" in task
    wait = task.index("cp.async.wait_all;")
    assert wait < task.index("barrier.cta.sync 0;")


@pytest.mark.rule("SEM-8.4")
def test_commit_group_lowering() -> None:
    task = _task(emit_cuda(*local("commit_group_stage")))
    copy = task.index("cp.async.cg.shared.global")
    commit = task.index('asm volatile("cp.async.commit_group;" ::: "memory");')
    wait = task.index('asm volatile("cp.async.wait_group 0;" ::: "memory");')
    assert copy < commit < wait < task.index("__syncwarp();")  # a 32-thread CTA is a warp
    assert "fence.proxy.async" not in task


@pytest.mark.rule("LANG-8.7")
def test_mma_lowering() -> None:
    text = emit_cuda(*local("mma_tile"))
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in text
    task = _task(text)
    # a[w], b[w, j], d[w, j]: w (warps) is distributed, j is a local fragment index
    assert "float a[4];" in task and "float b[4];" in task and "float d[8];" in task
    assert "exo_Sm80_mma_tf32_k8((d + j * 4), a, (b + j * 2));" in task
    assert "exo_Sm80_store_d_tf32<0>(" in task and "exo_Sm80_zero_d_tf32((d + j * 4));" in task
    assert "mma.sync" not in emit_cuda(*example("saxpy"))


@pytest.mark.rule("LANG-8.2")
@pytest.mark.rule("LANG-8.6")
def test_host_function_saxpy() -> None:
    text = emit_cuda(*example("saxpy"))
    assert ('extern "C" void saxpy(cudaStream_t exo_cudaStream, int64_t n, float* a, float* x, '
            'float* y)') in text
    assert "EXO_ASSUME(((n % 256) == 0));" in text
    assert "exo_args.a = (*a);" in text
    assert "        float a;\n" in text  # the grid constant travels by value
    assert "__grid_constant__ exo_Cuda0_saxpy::exo_DeviceArgs exo_deviceArgs" in text
    assert "__launch_bounds__(256, 1)" in text
    assert "const int64_t exo_hi0 = (exo_deviceArgs.n / 256);" in text
    assert "exo_task.blk = static_cast<int_fast32_t>(exo_lo0 + exo_rem);" in text


@pytest.mark.rule("LANG-8.3")
def test_task_nest_round_robin() -> None:
    text = emit_cuda(*example("matadd_2d_guard"))
    assert "const int64_t exo_taskCount = exo_count0 * exo_count1;" in text
    assert "for (int64_t exo_taskIndex = blockIdx.x; exo_taskIndex < exo_taskCount; " \
        "exo_taskIndex += gridDim.x) {" in text
    inner = text.index("exo_task.bj = static_cast<int_fast32_t>(exo_lo1 + exo_rem % exo_count1);")
    assert inner < text.index("exo_task.bi = static_cast<int_fast32_t>(exo_lo0 + exo_rem);")


@pytest.mark.rule("LANG-6.1")
@pytest.mark.rule("LANG-6.5")
def test_host_statements() -> None:
    text = emit_cuda(*local("host_mix"))
    assert "struct exo_win_2f32 x" in text
    assert "EXO_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&tmp), sizeof(float) * n * 4" \
        ", exo_cudaStream));" in text
    assert "EXO_CUDA_CHECK(cudaMemcpy2DAsync(tmp, sizeof(float) * 4, xh, sizeof(float) * 4, " \
        "sizeof(float) * 4, n, cudaMemcpyHostToDevice, exo_cudaStream));" in text
    assert "EXO_CUDA_CHECK(cudaFreeAsync(tmp, exo_cudaStream));" in text
    assert text.index("cudaMemcpyDeviceToHost") < text.index("cudaFreeAsync(tmp")
    assert "for (int64_t rep = 0; rep < 2; rep++) {" in text
    assert "memcpy(exo_args.coef, coef, sizeof(exo_args.coef));" in text
    assert "exo_args.exo_stride0_x = x.strides[0];" in text
    assert "#pragma unroll 4" in text


def test_window_statement() -> None:
    task = _task(emit_cuda(*example("window_read")))
    assert "exo_deviceArgs.x[exo_task.blk * 256 + (255 - exo_1thr_t)]" in task



@pytest.mark.rule("COLL-4.3")
def test_shadowed_guard_variable_keeps_outer_iterator() -> None:
    # Both loops' guard variables are exo_0thr_t; the window composed with the outer t must
    # still read the outer one inside the inner guarded block.
    task = _task(emit_cuda(*local("shadowed_iterator")))
    assert "[[maybe_unused]] const int exo_outer1_exo_0thr_t = exo_0thr_t;" in task
    assert "exo_deviceArgs.x[exo_task.blk * 32 + exo_outer1_exo_0thr_t]" in task


@pytest.mark.rule("COLL-5.12", "LANG-8.7")
def test_warp_shuffles_exchange_one_register_per_lane_pair() -> None:
    """A callee-distributed window is one register per thread (its dimension dropped); the
    member mask names just the two lanes laneMask apart."""
    text = emit_cuda(*example("warp_shuffle_sum"))
    task = _task(text)
    assert "float v;" in task and "float w;" in task  # [2, 2] over the team: one register
    assert "w = v + __shfl_xor_sync(((5u) << (threadIdx.x & 29u)), v, 2);" in task
    assert "v = w + __shfl_xor_sync(((3u) << (threadIdx.x & 30u)), w, 1);" in task


@pytest.mark.rule("DIAL-12")
@pytest.mark.rule("DIAL-13")
def test_ring_reinitialised_after_a_block_barrier() -> None:
    """An in-order ring is exempt from the free check because every re-initialisation of its
    slots comes after a CTA barrier: each instance's init is barrier, init, barrier (in the
    task function of each warp role)."""
    proc, cert = example("ring_tasks_no_fence")
    body = emit_cuda(proc, cert)
    for name in ("full", "empty"):
        at = body.index(f"// {name}: barrier @ CudaMbarrier: ring of depth 2")
        init = body.index("mbarrier.init.shared::cta.b64", at)
        assert body[at:init].count("barrier.cta.sync 0;") == 1
        after = body.index("barrier.cta.sync 0;", init)
        assert "mbarrier.init" not in body[after:body.index("\n", after)]
