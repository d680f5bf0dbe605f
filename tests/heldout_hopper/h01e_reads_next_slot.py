# expect: h01e_reads_next_slot refuted WAR A_s 22
# Seeded bug (wrong ring slot): the consumer reads slot (k + 1) % 3 instead of k % 3. The value
# is stale but was loaded and awaited (no RAW); the hazard is that this read, done after
# consumer arrive #(k - 2), is not covered by the release the producer's refill of that slot at
# k + 1 waits for (await #(k + 1) pairs with arrive #(k - 2), SEM-6.4): WAR HAZARD @ A_s at
# the TMA (SEM-4.5); K = 3 at least.
from verifier.lang import *


@proc
def h01e_reads_next_slot(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
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
                            y[task, k, t / 2, 16 * (t % 2) + j] = A_s[(k + 1) % 3, t / 2, 16 * (t % 2) + j] * 2.0
                    Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
