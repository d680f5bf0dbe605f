# expect: h15a_bulk_wait_one_lag_two refuted WAR S 24
# Seeded bug (wait_group too lax for the ring lag): warp 4 keeps one TMA store in flight
# (Await(tcg, ., 1)) while the producer still runs two slots ahead (Await(war, ~2)). The
# store of iteration k retires at k + 1, after release #k, and after the producer's refill of
# slot k % 2 at k + 2 only the fence of k + 2 would order it, which comes later in the trace:
# WAR HAZARD @ S at the TMA load (SEM-8.4, SEM-6.4, SEM-4.5); K = 3.
from verifier.lang import *


@proc
def h15a_bulk_wait_one_lag_two(T: size, K: size, X: f32[T, 32 * K, 32] @ CudaGmemLinear,
                                Y: f32[T, 32 * K, 32] @ CudaGmemLinear):
    X_map = X[:, :, :] @ Sm90_tensorMap(0, 1, 32, 32)
    Y_map = Y[:, :, :] @ Sm90_tensorMap(0, 1, 32, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            S: f32[2, 32, 32] @ CudaSmemLinear
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            tcg: barrier @ CudaCommitGroup
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~2)
                    Sm90_copy_tensor_to_smem_linear_2f32(S[k % 2, :, :], X_map[task, 32 * k:32 * k + 32, 0:32], size0=32, size1=32, smem_box=(1, 32, 32)) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    Await(raw, cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        for j in seq(0, 8):
                            S[k % 2, t / 4, 8 * (t % 4) + j] = S[k % 2, t / 4, 8 * (t % 4) + j] * 3.0
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                with CudaWarps(4, 5):
                    Sm90_copy_tensor_to_gmem_linear_2f32(Y_map[task, 32 * k:32 * k + 32, 0:32], S[k % 2, :, :], size0=32, size1=32, smem_box=(1, 32, 32))
                    Arrive(tma_to_gmem_async) >> tcg
                    Await(tcg, cuda_in_order, 1)
                with CudaWarps(4, 8):
                    Arrive(cuda_in_order) >> war
            with CudaWarps(4, 5):
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
