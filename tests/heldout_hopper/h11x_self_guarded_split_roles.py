# expect: h11x_self_guarded_split_roles rejected ERR-A24
# Held-out spec check (a design error of the tester, kept): a 4-CTA multicast with ONE
# self-guarded mbarrier, arrived on by the TMA warp of each CTA and awaited by the whole CTA.
# First prediction: PROVED. Wrong by the spec: LANG-5.12 requires each Arrive on z to run on
# the same threads as the Awaits on guardedBy(z) = z, and 32 != 128 threads: rejected ERR-A24
# (the hardware mbarrier would be initialised for one arrival count and waited by another
# role; the raw/war pair of h11_cluster4_multicast is the legal form).
from verifier.lang import *


@proc
def h11x_self_guarded_split_roles(T: size, A: f32[64 * T, 32] @ CudaGmemLinear,
                           y: f32[T, 4, 64, 32] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 16, 32)
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, T):
            A_s: f32[4, 64, 32] @ Sm90_SmemSwizzled(128)
            bar: barrier[4] @ CudaMbarrier
            with CudaWarps(0, 1):
                Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(A_s[:, :, :], A_map[64 * task:64 * task + 64, 0:32], ncta=4, cta_stride=1, size0=64, size1=32) >> bar[:]
                for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                    Arrive(cuda_temporal) >> bar[c] >> bar[:]
            for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                Await(bar[c], cuda_in_order, ~0)
                for t in cuda_threads(0, 128):
                    for j in seq(0, 16):
                        y[task, c, t / 2, 16 * (t % 2) + j] = A_s[c, 63 - t / 2, 16 * (t % 2) + j]
            Fence(cuda_in_order, cuda_in_order)
