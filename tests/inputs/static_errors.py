from verifier.lang import *

@proc
def k(n: size, x: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 300):
                x[256 * blk + t] = 1.0

@proc
def k3(n: size, x: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for blk in cuda_tasks(0, n / 128):
            for t in cuda_threads(0, 512):
                x[128 * blk + t] = 1.0
