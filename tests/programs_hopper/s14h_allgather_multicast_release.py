# expect: s14h_allgather_multicast_release proved
# The fix of s14g: a guarded pair. Each CTA releases with a multicast Arrive on `done`
# (`>> done[c] >> done[:]`) after it read round k, and awaits its own `done` (lag 1) before it
# arrives on `full` again: A's arrive #x on full[B] then follows B's await #(x - 1) on full[B]
# (through B's arrive #(x - 1) on done[A]), so every phase of every CTA's barrier is finished
# before the next round's arrive lands (SEM-6.8).
from verifier.lang import *


@proc
def s14h_allgather_multicast_release(K: size, inp: f32[K, 4, 128] @ CudaGmemLinear,
                                     xchg: f32[K, 4, 128] @ CudaGmemLinear,
                                     y: f32[K, 4, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, 1):
            full: barrier[4] @ CudaMbarrier
            done: barrier(full)[4] @ CudaMbarrier
            for k in seq(0, K):
                for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                    Await(done[c], cuda_in_order, ~1)
                    for t in cuda_threads(0, 128):
                        xchg[k, c, t] = inp[k, c, t]
                    Arrive(cuda_in_order) >> full[c] >> full[:]
                for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                    Await(full[c], cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        y[k, c, t] = xchg[k, 0, t] + xchg[k, 1, t] + xchg[k, 2, t] + xchg[k, 3, t]
                    Arrive(cuda_in_order) >> done[c] >> done[:]
            Fence(cuda_in_order, cuda_in_order)
