# expect: s3_missing_second_fence refuted WAR s 11
# semantics.md S3: S1 without the second Fence; the free of `s` (all 256 threads) is not ordered
# after the reads (WAR HAZARD @ free(s[...])), reported at the allocation statement.
from verifier.lang import *


@proc
def s3_missing_second_fence(inp: f32[4, 256] @ CudaGmemLinear, y: f32[4, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 4):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = inp[task, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                y[task, t] = s[255 - t]
