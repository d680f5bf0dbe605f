# expect: h01d_temporal_release refuted WAR A_s 22
# Seeded bug: the consumer releases the slot with Arrive(cuda_temporal) >> war. A first sync-tl
# with an empty full set witnesses nothing (SEM-5.1, Decision D2), so the consumer's reads are
# never carried to the producer, whose TMA refill of slot 0 at k = 3 lacks temp: WAR HAZARD @
# A_s at the TMA (SEM-4.5). (Legal as written, LANG-5.20; upstream lowers it to a real arrive,
# but the spec keeps D2 conservative.)
from verifier.lang import *


@proc
def h01d_temporal_release(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
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
                    Arrive(cuda_temporal) >> war
            Fence(cuda_in_order, cuda_in_order)
