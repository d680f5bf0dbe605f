from verifier.lang import *

@proc
def k2(n: size, x: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                x[256 * blk + tt] = 1.0


@proc
def good(n: size, x: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                x[256 * blk + t] = 1.0
