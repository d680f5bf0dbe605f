# expect: threads_variable_hi rejected ERR-A20
# A cuda_threads loop whose bound is the size N: the threads of a loop are fixed when the kernel
# is compiled, so its hi must be an integer literal (COLL-2.7).
from verifier.lang import *


@proc
def threads_variable_hi(N: size, dst: i32[N] @ CudaGmemLinear):
    assert N <= 128
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 1):
            for i in cuda_threads(0, N):
                dst[i] = 0
