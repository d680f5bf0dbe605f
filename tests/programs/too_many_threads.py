# expect: too_many_threads rejected ERR-A21
# cuda_threads(0, 300) in a 256-thread CTA: not enough threads (max_tile_count=256).
from verifier.lang import *


@proc
def too_many_threads(nb: size, x: f32[nb, 300] @ CudaGmemLinear, y: f32[nb, 300] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, nb):
            for t in cuda_threads(0, 300):
                y[task, t] = x[task, t]
