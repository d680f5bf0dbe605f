# expect: s14c_arrive_under_if rejected ERR-A24
# semantics.md S14 with the multicast Arrive under `if task == 0`: every CTA of a multicast group must arrive (LANG-5.13).
from verifier.lang import *


@proc
def s14c_arrive_under_if(T: size, inp: f32[T, 2, 2, 128] @ CudaGmemLinear,
                         xchg: f32[T, 2, 2, 128] @ CudaGmemLinear,
                         y: f32[T, 2, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, T):
            bar: barrier[2, 2] @ CudaMbarrier
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        xchg[task, m, n, t] = inp[task, m, n, t]
                    if task == 0:
                        Arrive(cuda_in_order) >> bar[m, :] >> bar[:, n]
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    Await(bar[m, n], cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        y[task, m, n, t] = xchg[task, m, 1 - n, t] + xchg[task, 1 - m, n, t]
            Fence(cuda_in_order, cuda_in_order)
