# expect: s14_multicast_arrive proved
# semantics.md S14: in a 2x2 cluster each CTA's Arrive is multicast to its row and column
# (`>> bar[m, :] >> bar[:, n]`, home bar[m, n]); a CTA may then read what its row and column
# peers wrote. The final cluster-scope fence orders the remote arrives before the barrier's free.
from verifier.lang import *


@proc
def s14_multicast_arrive(T: size, inp: f32[T, 2, 2, 128] @ CudaGmemLinear,
                         xchg: f32[T, 2, 2, 128] @ CudaGmemLinear,
                         y: f32[T, 2, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, T):
            bar: barrier[2, 2] @ CudaMbarrier
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        xchg[task, m, n, t] = inp[task, m, n, t]
                    Arrive(cuda_in_order) >> bar[m, :] >> bar[:, n]
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    Await(bar[m, n], cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        y[task, m, n, t] = xchg[task, m, 1 - n, t] + xchg[task, 1 - m, n, t]
            Fence(cuda_in_order, cuda_in_order)
