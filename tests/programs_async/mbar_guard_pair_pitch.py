# expect: mbar_guard_pair_pitch rejected ERR-A24
# COLL-5.14, upstream dev26's tie of a guard pair: the Arrive on g (i over warps, pitch 32) and
# the Awaits on guardedBy(g) = z (i over pairs of warps, pitch 64) have the same base collective
# (warp 0) but index with different thread pitches ("inconsistent thread pitch with previous
# Await(z, ...) [guarded_by]").
from verifier.lang import *


@proc
def mbar_guard_pair_pitch(K: size, y: f32[K, 2, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 1):
            g: barrier[2] @ CudaMbarrier
            z: barrier(g)[2] @ CudaMbarrier
            for k in seq(0, K):
                for i in cuda_threads(0, 2, unit=2 * cuda_warp):
                    with CudaWarps(0, 1):
                        Await(z[i], cuda_in_order, ~1)
                with CudaWarps(0, 2):
                    for i in cuda_threads(0, 2, unit=cuda_warp):
                        Arrive(cuda_in_order) >> g[i]
                        Await(g[i], cuda_in_order, ~0)
                        for t in cuda_threads(0, 32):
                            y[k, i, t] = 1.0
                        Arrive(cuda_in_order) >> z[i]
