# expect: h11_cluster4_multicast proved
# spec: PROVED. A 4-CTA cluster shares one 64x32 tile: each CTA's TMA warp issues a 16-row
# quarter multicast to all four CTAs (ncta = 4, unit 4 x cuda_warp_in_cluster_strided(1);
# trailing `>> raw[:]`; expect-tx 4 x 16 x 32 x 4 bytes on each CTA's own element, SEM-8.6).
# Each CTA's producer Arrive reaches all four homes (`>> raw[c] >> raw[:]`), so Await(raw[c])
# retires all four quarters in CTA c (SEM-6.1, 6.4); the consumers' release is multicast too
# (`>> war[c] >> war[:]`; the one-shot Await(war, ~1) is trivial). A cluster-scope Fence
# before exit orders the remote arrives and the peers' multicast writes before the frees
# (SEM-4.7, S14).
from verifier.lang import *


@proc
def h11_cluster4_multicast(T: size, A: f32[64 * T, 32] @ CudaGmemLinear,
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
                Arrive(cuda_in_order) >> war[c] >> war[:]
            Fence(cuda_in_order, cuda_in_order)
