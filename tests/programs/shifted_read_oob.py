# expect: shifted_read_oob refuted out-of-bounds x 13
# Reads the right neighbour without a guard: the last thread of the last task reads x[n]
# (counterexample n = 256).
from verifier.lang import *


@proc
def shifted_read_oob(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                y[256 * blk + t] = x[256 * blk + t + 1] - x[256 * blk + t]
