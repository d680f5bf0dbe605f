# expect: h01a_ring_overrun_lag4 refuted WAR A_s 21
# Seeded bug (ring off by one): Await(war, ~4) over a 3-slot data ring. Producer await #3 is
# still trivial (a_max = -1, SEM-6.4), so the TMA of k = 3 overwrites slot 0 while the
# consumer's read of k = 0 has no temp grant for the producer lanes: WAR HAZARD @ A_s
# (SEM-4.5), at the TMA call; counterexample K = 4.
from verifier.lang import *


@proc
def h01a_ring_overrun_lag4(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
                               y: f32[T, K, 64, 32] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[3, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~4)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[k % 3, :, :], A_map[64 * task:64 * task + 64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    Await(raw, cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        for j in seq(0, 16):
                            y[task, k, t / 2, 16 * (t % 2) + j] = A_s[k % 3, t / 2, 16 * (t % 2) + j] * 2.0
                    Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
