# expect: block_reduce_warp_tail proved
# Block reduction where the levels with at most 32 active threads (all in warp 0) are followed
# only by a warp-0 fence (`with CudaWarps(0, 1): Fence(...)`, a __syncwarp): the readers of each
# such level are lanes of warp 0 and so were the writers. The level after stride 64 keeps a CTA
# fence (writers 32..63 are in warp 1).
from verifier.lang import *


@proc
def block_reduce_warp_tail(nb: size, x: f32[nb, 256] @ CudaGmemLinear, out: f32[nb] @ CudaGmemLinear):
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
