# expect: h04_tma_reduce_splitk proved
# spec: PROVED. Split-K style: task (m, s) loads its 32x32 slice X[s, m] by TMA (one-shot
# raw/war pair: Await(war, ~1) is trivial, S8), the whole CTA doubles it into C_s with
# ordinary code, a CTA proxy fence hands C_s to the async proxy, and warp 0 reduces C_s into
# the shared tile C[m] with a TMA reduce. The S tasks' reductions of one tile are atomic
# mutates with Qa = {tmaG} that meet each other's X = {tmaG, async}, so they commute
# (SEM-4.5, S12); the CPU-scope memset before the kernel is ordered by the kernel boundary
# (SEM-1.6). The bulk group is waited before C_s is freed (SEM-8.4, SEM-4.7).
from verifier.lang import *


@proc
def h04_tma_reduce_splitk(M: size, S: size, X: f32[S, 32 * M, 32] @ CudaGmemLinear,
                          C: f32[32 * M, 32] @ CudaGmemLinear):
    X_map = X[:, :, :] @ Sm90_tensorMap(0, 1, 32, 32)
    C_map = C[:, :] @ Sm90_tensorMap(0, 32, 32)
    cudaMemsetAsync0_2f32(32 * M, 32, C[:, :])
    with CudaDeviceFunction(blockDim=128):
        for m in cuda_tasks(0, M):
            for s in cuda_tasks(0, S):
                X_s: f32[32, 32] @ CudaSmemLinear
                C_s: f32[32, 32] @ CudaSmemLinear
                raw: barrier @ CudaMbarrier
                war: barrier(raw) @ CudaMbarrier
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~1)
                    Sm90_copy_tensor_to_smem_linear_2f32(X_s[:, :], X_map[s, 32 * m:32 * m + 32, 0:32], size0=32, size1=32, smem_box=(1, 32, 32)) >> raw
                    Arrive(cuda_temporal) >> raw
                Await(raw, cuda_in_order, ~0)
                for t in cuda_threads(0, 128):
                    for j in seq(0, 8):
                        C_s[t / 4, 8 * (t % 4) + j] = X_s[t / 4, 8 * (t % 4) + j] * 2.0
                Arrive(cuda_in_order) >> war
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                with CudaWarps(0, 1):
                    Sm90_reduce_tensor_to_gmem_linear_2f32(C_map[32 * m:32 * m + 32, 0:32], C_s[:, :], size0=32, size1=32)
                    tcg: barrier @ CudaCommitGroup
                    Arrive(tma_to_gmem_async) >> tcg
                    Await(tcg, cuda_in_order, 0)
                Fence(cuda_in_order, cuda_in_order)
