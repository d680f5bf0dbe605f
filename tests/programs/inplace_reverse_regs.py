# expect: inplace_reverse_regs proved
# In-place reversal done right: read into a distributed register tile, CTA fence (orders every
# read of y before any overwrite: WAR), then write back.
from verifier.lang import *


@proc
def inplace_reverse_regs(nb: size, y: f32[nb, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            r: f32[256] @ CudaRmem
            for t in cuda_threads(0, 256):
                r[t] = y[blk, 255 - t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                y[blk, t] = r[t]
