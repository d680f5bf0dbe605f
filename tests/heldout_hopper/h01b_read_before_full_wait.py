# expect: h01b_read_before_full_wait refuted RAW A_s 25
# Seeded bug (consumer reads a slot before its full-barrier wait): the loads of A_s come
# before Await(raw), so the TMA records (issue only, OOO, SEM-4.4) are visible to nobody:
# RAW HAZARD @ A_s (SEM-4.5, SEM-4.6) at the read; counterexample K = 1.
from verifier.lang import *


@proc
def h01b_read_before_full_wait(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
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
                    for t in cuda_threads(0, 128):
                        for j in seq(0, 16):
                            y[task, k, t / 2, 16 * (t % 2) + j] = A_s[k % 3, t / 2, 16 * (t % 2) + j] * 2.0
                    Await(raw, cuda_in_order, ~0)
                    Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
