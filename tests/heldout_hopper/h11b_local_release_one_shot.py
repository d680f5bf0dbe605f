# expect: h11b_local_release_one_shot proved
# Held-out NON-bug: the consumers' release is not multicast (`>> war[c]`). In this one-shot
# kernel the producer's only Await(war, ~1) is trivial (SEM-6.4), so no refill depends on the
# release, and the cluster Fence still orders every access before the frees: PROVED (compare
# h06a, where a ring refills the slot and the same change is a WAR).
from verifier.lang import *


@proc
def h11b_local_release_one_shot(T: size, A: f32[64 * T, 32] @ CudaGmemLinear,
                           y: f32[T, 4, 64, 32] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 16, 32)
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, T):
            A_s: f32[4, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier[4] @ CudaMbarrier
            war: barrier(raw)[4] @ CudaMbarrier
            with CudaWarps(0, 1):
                for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                    Await(war[c], cuda_temporal, ~1)
                Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(A_s[:, :, :], A_map[64 * task:64 * task + 64, 0:32], ncta=4, cta_stride=1, size0=64, size1=32) >> raw[:]
                for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                    Arrive(cuda_temporal) >> raw[c] >> raw[:]
            for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                Await(raw[c], cuda_in_order, ~0)
                for t in cuda_threads(0, 128):
                    for j in seq(0, 16):
                        y[task, c, t / 2, 16 * (t % 2) + j] = A_s[c, 63 - t / 2, 16 * (t % 2) + j]
                Arrive(cuda_in_order) >> war[c]
            Fence(cuda_in_order, cuda_in_order)
