# expect: s11a_await_first rejected ERR-A32
# semantics.md S11 with the Await before the Arrive: a cluster sync is arrive-first (LANG-5.16).
from verifier.lang import *


@proc
def s11a_await_first(T: size, inp: f32[T, 2, 128] @ CudaGmemLinear,
                     xchg: f32[T, 2, 128] @ CudaGmemLinear, y: f32[T, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=2, blockDim=128):
        for task in cuda_tasks(0, T):
            cs: barrier @ CudaClusterSync
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    xchg[task, cta, t] = inp[task, cta, t]
            Await(cs, cuda_in_order, 0)
            Arrive(cuda_in_order) >> cs
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    y[task, cta, t] = xchg[task, 1 - cta, t]
