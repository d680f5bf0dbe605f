# expect: s2_missing_first_fence refuted RAW s 14
# semantics.md S2: S1 without the first Fence; thread 0 reads s[255], written by thread 255.
from verifier.lang import *


@proc
def s2_missing_first_fence(inp: f32[4, 256] @ CudaGmemLinear, y: f32[4, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 4):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = inp[task, t]
            for t in cuda_threads(0, 256):
                y[task, t] = s[255 - t]
            Fence(cuda_in_order, cuda_in_order)
