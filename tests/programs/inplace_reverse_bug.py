# expect: inplace_reverse_bug refuted RAW y 13
# In-place reversal of a GMEM row without a fence between reading and overwriting: thread 128
# reads y[blk, 127], which thread 127 has already overwritten (nothing orders the threads).
from verifier.lang import *


@proc
def inplace_reverse_bug(nb: size, y: f32[nb, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            for t in cuda_threads(0, 256):
                r: f32 @ CudaRmem
                r = y[blk, 255 - t]
                y[blk, t] = r
