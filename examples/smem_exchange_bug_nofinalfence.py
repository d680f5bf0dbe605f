# expect: smem_exchange_bug_nofinalfence refuted WAR tile 13
# Final fence removed: the read of tile[i] by thread 255 - i is not ordered before the free of
# `tile` at the end of the task (the free is a write by every thread of the CTA). The failing
# check is the free, reported at the allocation statement.
from verifier.lang import *


@proc
def smem_exchange_bug_nofinalfence(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            tile: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                tile[t] = x[256 * blk + t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                y[256 * blk + t] = tile[255 - t] * 2.0
