# expect: s1_cta_exchange proved
# semantics.md S1: CTA exchange through SMEM with two CTA-wide fences.
from verifier.lang import *


@proc
def s1_cta_exchange(inp: f32[4, 256] @ CudaGmemLinear, y: f32[4, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 4):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = inp[task, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                y[task, t] = s[255 - t]
            Fence(cuda_in_order, cuda_in_order)
