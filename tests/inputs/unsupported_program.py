from verifier.lang import *


@proc
def data_dependent(n: size, idx: i32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, n):
            for t in cuda_threads(0, 1):
                if idx[task] > 0:
                    y[task] = 1.0
