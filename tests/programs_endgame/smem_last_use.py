# expect: smem_last_use proved
# DIAL-17 (upstream's suballocator): `a` is freed after its last use, just before the block
# statement that allocates `b`, so every access of `a` must be ordered before that point
# (here the Fence), not only before the end of the task.
from verifier.lang import *
from exo.platforms.cuda_tk import *


@proc
def smem_last_use(x: f32[128] @ CudaGmemLinear, y: f32[128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 1):
            a: f32[128] @ CudaSmemLinear
            for t in cuda_threads(0, 128):
                a[t] = x[t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 128):
                y[t] = a[127 - t]
            Fence(cuda_in_order, cuda_in_order)
            b: f32[128] @ CudaSmemLinear
            for t in cuda_threads(0, 128):
                b[t] = x[t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 128):
                y[t] = b[127 - t]
            Fence(cuda_in_order, cuda_in_order)
