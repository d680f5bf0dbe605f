# expect: temporal_fence_read_bug refuted RAW s 16
# S1 with a first fence whose second sync-tl is cuda_temporal: it only orders in time and never
# carries values, so thread 0's read of s[255] lacks full visibility.
from verifier.lang import *


@proc
def temporal_fence_read_bug(inp: f32[4, 256] @ CudaGmemLinear, y: f32[4, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 4):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = inp[task, t]
            Fence(cuda_in_order, cuda_temporal)
            for t in cuda_threads(0, 256):
                y[task, t] = s[255 - t]
            Fence(cuda_in_order, cuda_in_order)
