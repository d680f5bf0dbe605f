# expect: h06d_multicast_arrive_local_release refuted ring-overrun raw 31
# Seeded bug (ring overrun through a multicast Arrive): every tile is now CTA-local (no
# multicast TMA), but the producers still arrive on both CTAs' raw (`>> raw[c] >> raw[:]`)
# while the consumers release only their own producer (`>> war[c]`). Arrive #(n + 1) of CTA 0
# lands in CTA 1's raw ring (depth 1) although nothing orders it after CTA 1's await #n: on
# the GPU CTA 0 running a phase ahead completes CTA 1's phase early, and CTA 1 reads a slot its
# own TMA has not filled. No data hazard exists in the sequential trace; SEM-6.8 (D10) is the
# rule that decides: mbarrier ring overrun @ raw (ERR-V09) at the producers' Arrive; K = 2.
from verifier.lang import *


@proc
def h06d_multicast_arrive_local_release(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
                               B: f32[64, 32 * K] @ CudaGmemLinear,
                               y: f32[T, K, 2, 32, 32] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 32, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 32, 32)
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
                        Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[c, k % 2, :, :], B_map[32 * c:32 * c + 32, 32 * k:32 * k + 32], size0=32, size1=32) >> raw[c]
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
