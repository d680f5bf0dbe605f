# expect: h06c_multicast_f16_bytes refuted transaction-count raw 26
# Seeded bug (wrong expect-tx bytes): B is f16 but the _2f32 multicast TMA expects 4 bytes per
# element (SEM-8.6: expect-tx = ncta x box x 4 = 4096 bytes on each issuer's raw[c]), while
# the copies deliver ncta x box x 2: the phase never completes. TRANSACTION COUNT MISMATCH @
# raw (ERR-V10) at the multicast TMA.
from verifier.lang import *


@proc
def h06c_multicast_f16_bytes(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
                               B: f16[32, 32 * K] @ CudaGmemLinear,
                               y: f32[T, K, 2, 32, 32] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 32, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 16, 32)
    with CudaDeviceFunction(clusterDim=2, blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[2, 2, 32, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[2, 2, 32, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier[2] @ CudaMbarrier
            war: barrier(raw)[2] @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(war[c], cuda_temporal, ~1)
                        Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[c, k % 2, :, :], A_map[64 * task + 32 * c:64 * task + 32 * c + 32, 32 * k:32 * k + 32], size0=32, size1=32) >> raw[c]
                    Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(B_s[:, k % 2, :, :], B_map[0:32, 32 * k:32 * k + 32], ncta=2, cta_stride=1, size0=32, size1=32) >> raw[:]
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Arrive(cuda_temporal) >> raw[c] >> raw[:]
                with CudaWarps(4, 8):
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(raw[c], cuda_in_order, ~0)
                        for t in cuda_threads(0, 128):
                            for j in seq(0, 8):
                                y[task, k, c, t / 4, 8 * (t % 4) + j] = A_s[c, k % 2, t / 4, 8 * (t % 4) + j] + B_s[c, k % 2, t / 4, 8 * (t % 4) + j]
                        Arrive(cuda_in_order) >> war[c] >> war[:]
            cs: barrier @ CudaClusterSync
            Arrive(cuda_in_order) >> cs
            Await(cs, cuda_in_order, 0)
# test: slow (over 2 s on the shared 2-core machine; runs in the slow suite)
