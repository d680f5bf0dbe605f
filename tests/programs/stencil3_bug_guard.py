# expect: stencil3_bug_guard refuted out-of-bounds x 12
# Upper guard off by one: the element i = n - 1 is processed and reads x[n].
from verifier.lang import *


@proc
def stencil3_bug_guard(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, (n + 255) / 256):
            for t in cuda_threads(0, 256):
                if 256 * blk + t >= 1 and 256 * blk + t < n:
                    y[256 * blk + t] = x[256 * blk + t - 1] + x[256 * blk + t] + x[256 * blk + t + 1]
