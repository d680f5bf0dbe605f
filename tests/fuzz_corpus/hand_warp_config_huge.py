from verifier.lang import *

@proc
def k(n: size):
    with CudaDeviceFunction(warp_config=[CudaWarpConfig('a', 10**9)]):
        for b in cuda_tasks(0, n):
            pass
