# expect: h06a_release_not_multicast refuted WAR B_s 27
# Seeded bug (multicast reaching fewer CTAs than read the tile): the consumers release only
# their own CTA's producer (`>> war[c]`), but each producer multicasts half of B into BOTH
# CTAs. CTA 1's producer refills CTA 0's B slot at k = 2 after only CTA 1's consumers
# released it; CTA 0's reads of k = 0 are unordered for its lanes: WAR HAZARD @ B_s at the
# multicast TMA (SEM-6.3, SEM-4.5); K = 3. (The raw ring can also overrun, SEM-6.8.)
from verifier.lang import *


@proc
def h06a_release_not_multicast(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
                               B: f32[32, 32 * K] @ CudaGmemLinear,
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
                        Arrive(cuda_in_order) >> war[c]
            cs: barrier @ CudaClusterSync
            Arrive(cuda_in_order) >> cs
            Await(cs, cuda_in_order, 0)
