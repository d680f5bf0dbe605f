# expect: h01f_release_by_one_warp rejected ERR-A24
# Seeded bug (arrive count mismatch): the consumer warpgroup waits on raw, but only its first
# warp releases the slot (`with CudaWarps(4, 5): Arrive >> war`); the other three warps' reads
# would go unreleased and war would be initialised for 32 arrivals. LANG-5.12: the Arrive
# collective of war must equal the Await collective of raw = guardedBy(war): ERR-A24.
from verifier.lang import *


@proc
def h01f_release_by_one_warp(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
                               y: f32[T, K, 64, 32] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[3, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~3)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[k % 3, :, :], A_map[64 * task:64 * task + 64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    Await(raw, cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        for j in seq(0, 16):
                            y[task, k, t / 2, 16 * (t % 2) + j] = A_s[k % 3, t / 2, 16 * (t % 2) + j] * 2.0
                with CudaWarps(4, 5):
                    Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
