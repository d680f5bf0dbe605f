# expect: window_stride_assert proved
# The asserts read a window parameter's stride (LANG-2.8): the stride is an integer the proof
# quantifies with the sizes, so `stride(x, 0) == N` and `stride(x, 0) == 8` together admit
# only N = 8, and y[i] stays inside y for i < N.
from verifier.lang import *


@proc
def window_stride_assert(N: size, x: [f32][N, 1] @ CudaGmemLinear, y: f32[8] @ CudaGmemLinear):
    assert stride(x, 0) == N
    assert stride(x, 0) == 8
    with CudaDeviceFunction(blockDim=32):
        for i in cuda_tasks(0, N):
            for t in cuda_threads(0, 1, unit=cuda_thread):
                y[i] = x[i, 0]
