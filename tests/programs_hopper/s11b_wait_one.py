# expect: s11b_wait_one rejected ERR-A29
# semantics.md S11 with Await(cs, cuda_in_order, 1): a cluster sync requires N = 0.
from verifier.lang import *


@proc
def s11b_wait_one(T: size, inp: f32[T, 2, 128] @ CudaGmemLinear,
                     xchg: f32[T, 2, 128] @ CudaGmemLinear, y: f32[T, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=2, blockDim=128):
        for task in cuda_tasks(0, T):
            cs: barrier @ CudaClusterSync
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    xchg[task, cta, t] = inp[task, cta, t]
            Arrive(cuda_in_order) >> cs
            Await(cs, cuda_in_order, 1)
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    y[task, cta, t] = xchg[task, 1 - cta, t]
