# expect: h04b_read_partial_sum refuted RAW C 41
# Seeded bug: after its own reduce retires, warp 0 reads the tile back (y). Another task's
# reduce of the same tile is an atomic record granting every thread only `atom` (SEM-4.4),
# and a read needs full: RAW HAZARD @ C at the read (SEM-4.5); counterexample S = 2. (The
# reduce of task 1 after task 0's read-back is also a WAR on C, SEM-4.5: found by the tool,
# missed by the first prediction, and right.) Before Choice M16 the machine let task 1's
# Await(tcg) retire task 0's stale tag and did not replay the RAW (verdict `unknown`).
from verifier.lang import *


@proc
def h04b_read_partial_sum(M: size, S: size, X: f32[S, 32 * M, 32] @ CudaGmemLinear,
                          C: f32[32 * M, 32] @ CudaGmemLinear,
                          y: f32[M, S, 32] @ CudaGmemLinear):
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
                    for t in cuda_threads(0, 32):
                        y[m, s, t] = C[32 * m + t, 0]
                Fence(cuda_in_order, cuda_in_order)
