# expect: transpose16_bug_oob refuted out-of-bounds tile 14
# Off-by-one column in the SMEM store: thread (0, 15) writes tile[0, 16]. Bounds are per dimension
# (the flat offset 16 would be inside the 256-element buffer).
from verifier.lang import *


@proc
def transpose16_bug_oob(nb: size, x: f32[nb, 16, 16] @ CudaGmemLinear, y: f32[nb, 16, 16] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            tile: f32[16, 16] @ CudaSmemLinear
            for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                for tx in cuda_threads(0, 16):
                    tile[ty, tx + 1] = x[blk, ty, tx]
            Fence(cuda_in_order, cuda_in_order)
            for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                for tx in cuda_threads(0, 16):
                    y[blk, ty, tx] = tile[tx, ty]
            Fence(cuda_in_order, cuda_in_order)
