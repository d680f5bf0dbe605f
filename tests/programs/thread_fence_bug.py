# expect: thread_fence_bug refuted RAW s 16
# The fence sits inside the thread loop, so it is a thread-scope fence (lowers to nothing):
# thread 0 then reads s[255], written by thread 255.
from verifier.lang import *


@proc
def thread_fence_bug(nb: size, x: f32[nb, 256] @ CudaGmemLinear, y: f32[nb, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            s: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                s[t] = x[blk, t]
                Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                y[blk, t] = s[255 - t]
            Fence(cuda_in_order, cuda_in_order)
