# expect: s11e_no_cluster_sync refuted RAW xchg 16
# semantics.md S11 without the cluster sync: each CTA reads the row the other CTA wrote, unordered.
from verifier.lang import *


@proc
def s11e_no_cluster_sync(T: size, inp: f32[T, 2, 128] @ CudaGmemLinear,
                     xchg: f32[T, 2, 128] @ CudaGmemLinear, y: f32[T, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=2, blockDim=128):
        for task in cuda_tasks(0, T):
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    xchg[task, cta, t] = inp[task, cta, t]
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    y[task, cta, t] = xchg[task, 1 - cta, t]
