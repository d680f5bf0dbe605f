from verifier.lang import *

@proc
def k3(n: size, x: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=250):
        for blk in cuda_tasks(0, n / 256):
            pass
