# expect: s16a_reduce_after_temporal refuted WAW s 16
# semantics.md S16 (a): `+=` is a read-write mutate and needs full visibility of thread 63's write
# of s[63]; the fence granted only temporal visibility.
from verifier.lang import *


@proc
def s16a_reduce_after_temporal():
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            s: f32[64] @ CudaSmemLinear
            for t in cuda_threads(0, 64):
                s[t] = 2.0
            Fence(cuda_in_order, cuda_temporal)
            for t in cuda_threads(0, 64):
                s[63 - t] += 1.0
            Fence(cuda_in_order, cuda_in_order)
