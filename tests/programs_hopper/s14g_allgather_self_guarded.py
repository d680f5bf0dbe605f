# expect: s14g_allgather_self_guarded refuted ring-overrun bar 23
# Seeded bug, decided from PTX (specs/verification.md, "SEM-6.8 and multicast"): an all-gather
# in a 4-CTA cluster, K rounds; each CTA arrives on all four barriers (`>> bar[c] >> bar[:]`)
# and awaits its own, one self-guarded barrier (ring depth 1). CTA A's arrive #x reaches bar[B]
# after A's await #(x - 1) on bar[A] only, which a peer C completes with its arrive on bar[A];
# C's arrive on bar[B] is a separate instruction that may still be in flight, so A's arrive #x
# can complete phase #(x - 1) of bar[B] in its place. Upstream's sync_check finds no hazard at
# K = 1..4. ERR-V09 at the Arrive; K = 2.
from verifier.lang import *


@proc
def s14g_allgather_self_guarded(K: size, inp: f32[K, 4, 128] @ CudaGmemLinear,
                                xchg: f32[K, 4, 128] @ CudaGmemLinear,
                                y: f32[K, 4, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, 1):
            bar: barrier[4] @ CudaMbarrier
            for k in seq(0, K):
                for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        xchg[k, c, t] = inp[k, c, t]
                    Arrive(cuda_in_order) >> bar[c] >> bar[:]
                for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                    Await(bar[c], cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        y[k, c, t] = xchg[k, 0, t] + xchg[k, 1, t] + xchg[k, 2, t] + xchg[k, 3, t]
            Fence(cuda_in_order, cuda_in_order)
