# expect: window_read proved
# Reading the task's row of x through a window `xw = x[blk, :]`.
from verifier.lang import *


@proc
def window_read(nb: size, x: f32[nb, 256] @ CudaGmemLinear, y: f32[nb, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            xw = x[blk, :]
            for t in cuda_threads(0, 256):
                y[blk, t] = xw[255 - t] + 1.0
