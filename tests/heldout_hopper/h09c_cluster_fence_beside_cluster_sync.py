# expect: h09c_cluster_fence_beside_cluster_sync rejected ERR-A17
# Seeded bug: a cluster-scope Fence at the end of the task while the CudaClusterSync `cs` is
# still live. Both lower to the one hardware cluster barrier (SEM-8.1 item 2, SEM-8.3), so
# LANG-5.21 forbids a cluster-scope Fence beside a live cluster sync: rejected ERR-A17.
from verifier.lang import *


@proc
def h09c_cluster_fence_beside_cluster_sync(T: size, K: size, inp: f32[T, K, 2, 128] @ CudaGmemLinear,
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
            Fence(cuda_in_order, cuda_in_order)
