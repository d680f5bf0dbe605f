# expect: smem_waw_collision refuted WAW s 13
# Two threads store to the same SMEM element (s[t / 2]): thread 1's write of s[0] is not ordered
# after thread 0's.
from verifier.lang import *


@proc
def smem_waw_collision(nb: size, x: f32[nb, 256] @ CudaGmemLinear, y: f32[nb, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            s: f32[128] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t / 2] = x[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 128):
                y[blk, t] = s[127 - t]
            Fence(cuda_in_order, cuda_in_order)
