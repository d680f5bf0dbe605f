# expect: h09b_temporal_cluster_sync refuted RAW xchg 23
# Seeded bug: both cluster-sync Awaits use cuda_temporal (LANG-5.11 makes them uniform). The
# first pair then grants only temp (SEM-5.2), and the peer's read needs full: RAW HAZARD @
# xchg at the read (SEM-4.5). The WAR half is still ordered (temp suffices for a write).
from verifier.lang import *


@proc
def h09b_temporal_cluster_sync(T: size, K: size, inp: f32[T, K, 2, 128] @ CudaGmemLinear,
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
                Await(cs, cuda_temporal, 0)
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        y[task, k, c, t] = xchg[task, 1 - c, 127 - t]
                Arrive(cuda_in_order) >> cs
                Await(cs, cuda_temporal, 0)
