# expect: s14a_diagonal_read refuted RAW xchg 22
# semantics.md S14 reading the diagonal CTA: its multicast arrive never names bar[m, n] (partial coverage).
from verifier.lang import *


@proc
def s14a_diagonal_read(T: size, inp: f32[T, 2, 2, 128] @ CudaGmemLinear,
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
                        y[task, m, n, t] = xchg[task, 1 - m, 1 - n, t]
            Fence(cuda_in_order, cuda_in_order)
