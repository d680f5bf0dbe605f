# expect: h09a_no_war_cluster_sync refuted WAR xchg 18
# Seeded bug: the second cluster sync of each iteration is gone. Iteration k + 1 overwrites
# xchg[task, c, :] while the peer's read of iteration k is not ordered at all: WAR HAZARD
# @ xchg at the write (SEM-4.5); K = 2.
from verifier.lang import *


@proc
def h09a_no_war_cluster_sync(T: size, K: size, inp: f32[T, K, 2, 128] @ CudaGmemLinear,
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
