# expect: stencil3 proved
# 3-point stencil with a two-sided guard; the neighbours of a thread may belong to another task
# (x is only read, so no synchronization is needed).
from verifier.lang import *


@proc
def stencil3(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, (n + 255) / 256):
            for t in cuda_threads(0, 256):
                if 256 * blk + t >= 1 and 256 * blk + t + 1 < n:
                    y[256 * blk + t] = x[256 * blk + t - 1] + x[256 * blk + t] + x[256 * blk + t + 1]
