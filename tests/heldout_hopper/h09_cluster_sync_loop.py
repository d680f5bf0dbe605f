# expect: h09_cluster_sync_loop proved
# spec: PROVED. A 2-CTA cluster exchanges a row through GMEM every iteration with one
# CudaClusterSync used twice per iteration (arrive-first alternation, LANG-5.16; one live
# cluster sync, LANG-5.21): the first pair makes each CTA's write visible to the peer's read
# (RAW, S11), the second orders the peer's read before the next iteration's overwrite (WAR,
# SEM-4.5). Every cluster-sync Await has N = 0 (LANG-5.9) and follows its Arrive.
from verifier.lang import *


@proc
def h09_cluster_sync_loop(T: size, K: size, inp: f32[T, K, 2, 128] @ CudaGmemLinear,
                          xchg: f32[T, 2, 128] @ CudaGmemLinear,
                          y: f32[T, K, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=2, blockDim=128):
        for task in cuda_tasks(0, T):
            cs: barrier @ CudaClusterSync
            for k in seq(0, K):
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        xchg[task, c, t] = inp[task, k, c, t]
                Arrive(cuda_in_order) >> cs
                Await(cs, cuda_in_order, 0)
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        y[task, k, c, t] = xchg[task, 1 - c, 127 - t]
                Arrive(cuda_in_order) >> cs
                Await(cs, cuda_in_order, 0)
