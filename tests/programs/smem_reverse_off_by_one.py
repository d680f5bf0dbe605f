# expect: smem_reverse_off_by_one refuted out-of-bounds s 15
# Reversal index written as 256 - t instead of 255 - t: thread 0 reads s[256].
from verifier.lang import *


@proc
def smem_reverse_off_by_one(nb: size, x: f32[nb, 256] @ CudaGmemLinear, y: f32[nb, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = x[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                y[blk, t] = s[256 - t]
            Fence(cuda_in_order, cuda_in_order)
