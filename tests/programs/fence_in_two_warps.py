# expect: fence_in_two_warps rejected ERR-L02
# A Fence executed by warps 1..2 of a 4-warp CTA: 64 threads are neither a thread, a warp, a CTA
# nor a cluster ("Fence collective unit matched no known case").
from verifier.lang import *


@proc
def fence_in_two_warps(nb: size, x: f32[nb, 64] @ CudaGmemLinear, y: f32[nb, 64] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, nb):
            s: f32[64] @ CudaSmemLinear
            with CudaWarps(1, 3):
                for l in cuda_threads(0, 64):
                    s[l] = x[task, l]
                Fence(cuda_in_order, cuda_in_order)
                for l in cuda_threads(0, 64):
                    y[task, l] = s[63 - l]
            Fence(cuda_in_order, cuda_in_order)
