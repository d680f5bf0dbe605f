# expect: h16_multicast_exchange_loop refuted ring-overrun bar 24
# Seeded bug (ring overrun of a self-guarded multicast barrier): semantics.md S14's 2x2
# row/column exchange, repeated K times with fresh GMEM slots per iteration (so no data hazard
# exists) and the same self-guarded `bar` (arrive-first, lag 0, ring depth 1, LANG-5.19).
# CTA A's arrive #x lands in the ring of each CTA B of its row and column; it follows A's await
# #(x - 1) on bar[A], which pairs only with B's arrive #(x - 1), not with B's await #(x - 1)
# (SEM-6.8 pair edges reach Arrives): B may still be waiting on its phase x - 1 when A's
# arrive #x lands in the same slot. mbarrier ring overrun @ bar (ERR-V09) at the Arrive; K = 2.
from verifier.lang import *


@proc
def h16_multicast_exchange_loop(T: size, K: size, inp: f32[T, K, 2, 2, 128] @ CudaGmemLinear,
                                xchg: f32[T, K, 2, 2, 128] @ CudaGmemLinear,
                                y: f32[T, K, 2, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, T):
            bar: barrier[2, 2] @ CudaMbarrier
            for k in seq(0, K):
                for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                    for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        for t in cuda_threads(0, 128):
                            xchg[task, k, m, n, t] = inp[task, k, m, n, t]
                        Arrive(cuda_in_order) >> bar[m, :] >> bar[:, n]
                for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                    for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(bar[m, n], cuda_in_order, ~0)
                        for t in cuda_threads(0, 128):
                            y[task, k, m, n, t] = xchg[task, k, m, 1 - n, t] + xchg[task, k, 1 - m, n, t]
            Fence(cuda_in_order, cuda_in_order)
