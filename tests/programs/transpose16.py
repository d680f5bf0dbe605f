# expect: transpose16 proved
# 16x16 transpose through SMEM with a 2-D thread nest (thread 16 * ty + tx).
from verifier.lang import *


@proc
def transpose16(nb: size, x: f32[nb, 16, 16] @ CudaGmemLinear, y: f32[nb, 16, 16] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            tile: f32[16, 16] @ CudaSmemLinear
            for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                for tx in cuda_threads(0, 16):
                    tile[ty, tx] = x[blk, ty, tx]
            Fence(cuda_in_order, cuda_in_order)
            for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                for tx in cuda_threads(0, 16):
                    y[blk, ty, tx] = tile[tx, ty]
            Fence(cuda_in_order, cuda_in_order)
