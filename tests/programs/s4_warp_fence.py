# expect: s4_warp_fence refuted WAR s 14
# semantics.md S4: warp-scope fences do not synchronize across warps. Warp 0 reads s[32..63]
# (not yet written); then warp 1's write of s[32] is not ordered after warp 0's read.
from verifier.lang import *


@proc
def s4_warp_fence(inp: f32[64] @ CudaGmemLinear, y: f32[64] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            s: f32[64] @ CudaSmemLinear
            for w in cuda_threads(0, 2, unit=cuda_warp):
                for l in cuda_threads(0, 32):
                    s[32 * w + l] = inp[32 * w + l]
                Fence(cuda_in_order, cuda_in_order)
                for l in cuda_threads(0, 32):
                    y[32 * w + l] = s[32 * (1 - w) + l]
            Fence(cuda_in_order, cuda_in_order)
