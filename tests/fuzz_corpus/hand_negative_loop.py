from verifier.lang import *

@proc
def k(n: size, x: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for b in cuda_tasks(0, -10**20):
            for t in cuda_threads(0, 32):
                x[t] = 0.0
