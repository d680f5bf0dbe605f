# expect: multi_thread_write rejected ERR-A18
# A scalar assignment executed by a whole warp (32 threads): writes must be executed by one thread.
from verifier.lang import *


@proc
def multi_thread_write(y: f32[2, 2] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 2):
            for w in cuda_threads(0, 2, unit=cuda_warp):
                y[task, w] = 1.0
