# expect: register_tile proved
# A register tile distributed over the CTA (r[t, :] lives in thread t) used across two separate
# thread loops; registers are per-thread, so no fence is needed between the loops.
from verifier.lang import *


@proc
def register_tile(nb: size, x: f32[nb, 1024] @ CudaGmemLinear, y: f32[nb, 1024] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            r: f32[256, 4] @ CudaRmem
            for t in cuda_threads(0, 256):
                for j in seq(0, 4):
                    r[t, j] = x[blk, 4 * t + j]
            for t in cuda_threads(0, 256):
                for j in seq(0, 4):
                    y[blk, 4 * t + 3 - j] = r[t, j] * 3.0
