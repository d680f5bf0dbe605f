# expect: h09d_temporal_cluster_arrive refuted RAW xchg 25
# Seeded bug: both cluster-sync Arrives use cuda_temporal (legal: cuda_temporal is below
# Sm80_generic, LANG-5.20). A first sync-tl with an empty full set witnesses nothing (SEM-5.1,
# Decision D2), so the writes are never carried to the peer: RAW HAZARD @ xchg at the read
# (SEM-4.5). Upstream lowers it to the same barrier.cluster.arrive; the spec stays
# conservative (D2).
from verifier.lang import *


@proc
def h09d_temporal_cluster_arrive(T: size, K: size, inp: f32[T, K, 2, 128] @ CudaGmemLinear,
                          xchg: f32[T, 2, 128] @ CudaGmemLinear,
                          y: f32[T, K, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=2, blockDim=128):
        for task in cuda_tasks(0, T):
            cs: barrier @ CudaClusterSync
            for k in seq(0, K):
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        xchg[task, c, t] = inp[task, k, c, t]
                Arrive(cuda_temporal) >> cs
                Await(cs, cuda_in_order, 0)
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        y[task, k, c, t] = xchg[task, 1 - c, 127 - t]
                Arrive(cuda_temporal) >> cs
                Await(cs, cuda_in_order, 0)
