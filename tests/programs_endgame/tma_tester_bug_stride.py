# expect: tma_tester rejected ERR-P29
# tma_tester.py with x passed as a column of a 3-d buffer (`d_x3[:, 0:K, 0]`, inner stride 2):
# the kernel's `assert stride(d_x, 1) == 1` does not hold at the call (CALL-4, LANG-2.8).
from verifier.lang import *

swizzle = 128
smem_M = 24
smem_K = 32
M = smem_M * 2
K = smem_K * 2


@proc
def tma_tester_gpu(
    sum_map: [f32][M, K] @ Sm90_tensorMap(swizzle, smem_M, smem_K),
    d_x: [f32][M, K] @ CudaGmemLinear,
    d_y: f32[M, K] @ CudaGmemLinear,
):
    assert stride(d_x, 1) == 1
    assert stride(d_y, 1) == 1
    assert stride(sum_map, 1) == 1
    x_map = d_x[:, :] @ Sm90_tensorMap(swizzle, smem_M, smem_K)

    with CudaDeviceFunction(blockDim=256):
        for task_m in cuda_tasks(0, 2):
            for task_k in cuda_tasks(0, 2):
                smem_x: f32[smem_M, smem_K] @ Sm90_SmemSwizzled(swizzle)
                smem_y: f32[smem_M, smem_K] @ Sm90_SmemSwizzled(swizzle)
                smem_sum: f32[smem_M, smem_K] @ Sm90_SmemSwizzled(swizzle)
                raw: barrier[1 @ ring_buffer_by(2)] @ CudaMbarrier
                war: barrier[2 @ ring_buffer_by(2)] @ CudaMbarrierPreArrive(1)

                with CudaWarps(0, 1):
                    Await(war[0], cuda_temporal, 0)
                    x_input = x_map[task_m * smem_M: task_m * smem_M + smem_M,
                                    task_k * smem_K: task_k * smem_K + smem_K]
                    Sm90_tma_load_2d(smem_x[:, :], x_input, size0=smem_M, size1=smem_K,
                                     dst=f32, src=f32, swizzle=swizzle,
                                     smem_box=(smem_M, smem_K)) >> raw[0]
                    Arrive(cuda_temporal, 1) >> raw[0]

                for m in cuda_threads(0, smem_M):
                    for ko in seq(0, smem_K / 4):
                        Sm80_cp_async_f32(
                            smem_y[m, ko * 4: ko * 4 + 4],
                            d_y[task_m * smem_M + m,
                                task_k * smem_K + ko * 4: task_k * smem_K + ko * 4 + 4],
                            size=4)
                Fence(Sm80_cp_async, cuda_in_order)

                Await(raw[0], cuda_in_order, 0)
                for m in cuda_threads(0, smem_M):
                    for k in seq(0, smem_K):
                        smem_sum[m, k] = smem_x[m, k] + smem_y[m, k]
                Arrive(cuda_in_order, 1) >> war[1]

                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                with CudaWarps(0, 1):
                    out = sum_map[task_m * smem_M: task_m * smem_M + smem_M,
                                  task_k * smem_K: task_k * smem_K + smem_K]
                    Sm90_tma_store_2d(out[:, :], smem_sum[:, :], size0=smem_M, size1=smem_K,
                                      dst=f32, src=f32, swizzle=swizzle,
                                      smem_box=(smem_M, smem_K))
                    cg: barrier @ Sm90_TmaCommitGroup
                    Arrive(tma_to_gmem_async, 1) >> cg
                    Await(cg, cuda_in_order, 0)
                Fence(cuda_in_order, cuda_in_order)


@proc
def tma_tester(h_sum: f32[M, K], h_x: f32[M, K], h_y: f32[M, K]):
    d_x3: f32[M, K, 2] @ CudaGmemLinear
    d_y: f32[M, K] @ CudaGmemLinear
    d_sum: f32[1 + M, K] @ CudaGmemLinear
    for m in seq(0, M):
        cudaMemcpyAsync_htod_1f32(K, d_x3[m, 0:K, 0], h_x[m, 0:K])
    cudaMemcpyAsync_htod_2f32(M, K, d_y[:, :], h_y[:, :])
    sum_map = d_sum[:, :] @ Sm90_tensorMap(swizzle, smem_M, smem_K)
    sum_window = sum_map[1:, :]
    tma_tester_gpu(sum_window[:, :], d_x3[:, 0:K, 0], d_y)
    cudaMemcpyAsync_dtoh_2f32(M, K, h_sum[:, :], d_sum[1:, :])
