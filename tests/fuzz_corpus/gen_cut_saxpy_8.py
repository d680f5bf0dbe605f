# expect: saxpy proved
# y = a * x + y, one element per thread, 256 threads per task; no shared memory, no fences.
from verifier.lang import *


@proc
def saxpy(n: size, a: f32 @ CudaGridConstant, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                xv: f32 @