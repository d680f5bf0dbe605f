# expect: seq_fence_loop_bug_war refuted WAR s 17
# The trailing fence is hoisted out of the seq loop (it still covers the free): at k = 1 thread 0
# overwrites s[0], which thread 255 read at k = 0 with no fence since.
from verifier.lang import *


@proc
def seq_fence_loop_bug_war(nb: size, K: size, x: f32[nb, K, 256] @ CudaGmemLinear, y: f32[nb, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            s: f32[256] @ CudaSmemLinear
            acc: f32[256] @ CudaRmem
            for t in cuda_threads(0, 256):
                acc[t] = 0.0
            for k in seq(0, K):
                for t in cuda_threads(0, 256):
                    s[t] = x[blk, k, t]
                Fence(cuda_in_order, cuda_in_order)
                for t in cuda_threads(0, 256):
                    acc[t] += s[255 - t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                y[blk, t] = acc[t]
