# expect: h04a_store_not_reduce refuted WAW C 33
# Seeded bug: the split-K epilogue uses a plain TMA store instead of the reduce. Tasks (m, 0)
# and (m, 1) then both write tile C[m] non-atomically; the later write-only mutate needs temp
# on the earlier task's tmaG record, and nothing orders tasks inside a kernel (SEM-1.3,
# SEM-1.7): WAW HAZARD @ C at the store (SEM-4.5); counterexample S = 2.
from verifier.lang import *


@proc
def h04a_store_not_reduce(M: size, S: size, X: f32[S, 32 * M, 32] @ CudaGmemLinear,
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
                    Sm90_copy_tensor_to_gmem_linear_2f32(C_map[32 * m:32 * m + 32, 0:32], C_s[:, :], size0=32, size1=32)
                    tcg: barrier @ CudaCommitGroup
                    Arrive(tma_to_gmem_async) >> tcg
                    Await(tcg, cuda_in_order, 0)
                Fence(cuda_in_order, cuda_in_order)
