# expect: task_waw_gmem refuted WAW y 12
# Every task writes the same 256 elements of y: task 1's write of y[0] is not ordered after
# task 0's (tasks are different threads and nothing synchronizes them). Counterexample nb = 2.
from verifier.lang import *


@proc
def task_waw_gmem(nb: size, x: f32[nb, 256] @ CudaGmemLinear, y: f32[256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            for t in cuda_threads(0, 256):
                y[t] = x[blk, t]
