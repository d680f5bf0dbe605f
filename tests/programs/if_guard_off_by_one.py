# expect: if_guard_off_by_one refuted out-of-bounds y 12
# Guard written with <= instead of <: for n = 1, thread 1 of task 0 writes y[1].
from verifier.lang import *


@proc
def if_guard_off_by_one(n: size, y: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, (n + 255) / 256):
            for t in cuda_threads(0, 256):
                if 256 * blk + t <= n:
                    y[256 * blk + t] = 0.0
