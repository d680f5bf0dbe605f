# expect: if_guard_tail proved
# Rounded-up task count with an `if` guard: safe for every n (no divisibility assumption).
from verifier.lang import *


@proc
def if_guard_tail(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, (n + 255) / 256):
            for t in cuda_threads(0, 256):
                if 256 * blk + t < n:
                    y[256 * blk + t] = x[256 * blk + t] * 2.0
