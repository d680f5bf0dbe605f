# expect: block_reduce proved
# Block sum reduction of 256 elements per task in shared memory: after the load, levels with
# strides 128, 64, ..., 1 each halve the active threads (`s[t] += s[t + h]` for t < h), with a
# CTA-wide fence after every level (level h reads s[h .. 2h-1], written by other threads at the
# previous level). Thread 0 writes the result; the final fence precedes the free of `s`.
from verifier.lang import *


@proc
def block_reduce(nb: size, x: f32[nb, 256] @ CudaGmemLinear, out: f32[nb] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = x[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 128):
                s[t] += s[t + 128]
            Fence(cuda_in_order, cuda_in_o