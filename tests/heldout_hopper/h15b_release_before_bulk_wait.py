# expect: h15b_release_before_bulk_wait proved
# Held-out NON-bug (first prediction wrong, kept): the math warpgroup releases the slot before
# warp 4 waits for the TMA store's bulk group. First prediction: WAR HAZARD @ S at the refill.
# The spec says PROVED, and the hardware agrees: warp 4 waits for the bulk group at the end of
# iteration k, and the CTA fence of iteration k + 1 (run by every warp, producer included)
# witnesses that retired read (warp 4 holds cuda2 full, SEM-5.1) and grants async to the whole
# CTA (SEM-5.3); the producer's refill of the slot at k + 2 follows that fence in its own
# program order. The release timing is moot because the per-iteration fence synchronizes.
from verifier.lang import *


@proc
def h15b_release_before_bulk_wait(T: size, K: size, X: f32[T, 32 * K, 32] @ CudaGmemLinear,
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
                with CudaWarps(4, 8):
                    Arrive(cuda_in_order) >> war
                with CudaWarps(4, 5):
                    Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
