from verifier.lang import *


@proc
def multicast(n: size, y: f32[n, 2, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, n):
            bar: barrier[2, 2] @ CudaMbarrier
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for k in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        y[task, m, k, t] = 1.0
                    Arrive(cuda_in_order) >> bar[m, :] >> bar[:, k]
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for k in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    Await(bar[m, k], cuda_in_order, ~0)
            Fence(cuda_in_order, cuda_in_order)
