# expect: s15_temporal_fence refuted WAR s 11
# semantics.md S15: S1 with the second fence temporal-only. cuda_temporal has an empty full set, so
# the fence witnesses nothing and the free of `s` still fails (reported at the allocation).
from verifier.lang import *


@proc
def s15_temporal_fence(inp: f32[4, 256] @ CudaGmemLinear, y: f32[4, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 4):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = inp[task, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                y[task, t] = s[255 - t]
            Fence(cuda_temporal, cuda_temporal)
