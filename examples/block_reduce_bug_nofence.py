# expect: block_reduce_bug_nofence refuted RAW s 18
# The fence after the stride-128 level is missing: at the stride-64 level thread 0 reads s[64],
# which thread 64 has just updated with no synchronization.
from verifier.lang import *


@proc
def block_reduce_bug_nofence(nb: size, x: f32[nb, 256] @ CudaGmemLinear, out: f32[nb] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = x[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 128):
                s[t] += s[t + 128]
            for t in cuda_threads(0, 64):
                s[t] += s[t + 64]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 32):
                s[t] += s[t + 32]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 16):
                s[t] += s[t + 16]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 8):
                s[t] += s[t + 8]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 4):
                s[t] += s[t + 4]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 2):
                s[t] += s[t + 2]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 1):
                s[t] += s[t + 1]
                out[blk] = s[t]
            Fence(cuda_in_order, cuda_in_order)
