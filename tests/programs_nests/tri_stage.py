# expect: tri_stage proved
# A per-thread cp.async stage inside a triangular nest (j < i + 1). The commit-group counters
# are sums over a non-rectangular nest: before iteration (i, j) each thread has arrived
# i (i + 1) / 2 + j times (sympy, encode/nest_sums.py); Await(..., 0) retires the current group.
from verifier.lang import *


@proc
def tri_stage(n: size, src: f32[n, n, 128] @ CudaGmemLinear, dst: f32[n, n, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            stage: f32[128] @ CudaSmemLinear
            cg: barrier[32] @ CudaCommitGroup
            for i in seq(0, n):
                for j in seq(0, i + 1):
                    for t in cuda_threads(0, 32):
                        Sm80_cp_async_f32(stage[4 * t:4 * t + 4], src[i, j, 4 * t:4 * t + 4], size=4)
                        Arrive(Sm80_cp_async, 1) >> cg[t]
                        Await(cg[t], cuda_in_order, 0)
                    Fence(cuda_in_order, cuda_in_order)
                    for t in cuda_threads(0, 32):
                        for q in seq(0, 4):
                            dst[i, j, 32 * q + t] = stage[32 * q + t]
                    Fence(cuda_in_order, cuda_in_order)
