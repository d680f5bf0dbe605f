# expect: pair_swap proved
# Swap neighbouring pairs through SMEM using constant `/` and `%` in the index.
from verifier.lang import *


@proc
def pair_swap(nb: size, x: f32[nb, 256] @ CudaGmemLinear, y: f32[nb, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = x[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                y[blk, t] = s[2 * (t / 2) + 1 - t % 2]
            Fence(cuda_in_order, cuda_in_order)
