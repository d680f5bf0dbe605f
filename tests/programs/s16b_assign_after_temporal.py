# expect: s16b_assign_after_temporal proved
# semantics.md S16 (b): `=` is a write-only mutate; temporal visibility of the earlier write suffices.
from verifier.lang import *


@proc
def s16b_assign_after_temporal():
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            s: f32[64] @ CudaSmemLinear
            for t in cuda_threads(0, 64):
                s[t] = 2.0
            Fence(cuda_in_order, cuda_temporal)
            for t in cuda_threads(0, 64):
                s[63 - t] = 1.0
            Fence(cuda_in_order, cuda_in_order)
