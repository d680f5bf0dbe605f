# expect: block_reduce_warp_tail_bug refuted RAW s 24
# Like block_reduce_warp_tail, but the fence after the stride-64 level is also only a warp-0
# fence: at the stride-32 level thread 0 reads s[32], updated by thread 32 (warp 1), which no
# fence executed by warp 0 can witness.
from verifier.lang import *


@proc
def block_reduce_warp_tail_bug(nb: size, x: f32[nb, 256] @ CudaGmemLinear, out: f32[nb] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = x[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 128):
                s[t] += s[t + 128]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 64):
                s[t] += s[t + 64]
            with CudaWarps(0, 1):
                Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 32):
                s[t] += s[t + 32]
            with CudaWarps(0, 1):
                Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 16):
                s[t] += s[t + 16]
            with CudaWarps(0, 1):
                Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 8):
                s[t] += s[t + 8]
            with CudaWarps(0, 1):
                Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 4):
                s[t] += s[t + 4]
            with CudaWarps(0, 1):
                Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 2):
                s[t] += s[t + 2]
            with CudaWarps(0, 1):
                Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 1):
                s[t] += s[t + 1]
                out[blk] = s[t]
            Fence(cuda_in_order, cuda_in_order)
