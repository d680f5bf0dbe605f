# expect: warp_handoff_bug_warpfence refuted RAW s 18
# The hand-off fence is executed inside CudaWarps(0, 1), i.e. by the producer warp only (a legal
# warp-scope fence, __syncwarp): the consumer warp 1 is not synchronized with warp 0's writes.
from verifier.lang import *


@proc
def warp_handoff_bug_warpfence(nb: size, x: f32[nb, 32] @ CudaGmemLinear, y: f32[nb, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for blk in cuda_tasks(0, nb):
            s: f32[32] @ CudaSmemLinear
            with CudaWarps(0, 1):
                for l in cuda_threads(0, 32):
                    s[l] = x[blk, l]
                Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(1, 2):
                for l in cuda_threads(0, 32):
                    y[blk, l] = s[31 - l] * 2.0
            Fence(cuda_in_order, cuda_in_order)
