from verifier.lang import *

@proc
def k(n: size):
    with CudaDeviceFunction(blockDim=32):
        for b in cuda_tasks(0, n):
            s: f32[10**9, 10**9] @ CudaSmemLinear
            for t in cuda_threads(0, 32):
                s[t, t] = 0.0
