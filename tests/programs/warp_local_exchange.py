# expect: warp_local_exchange proved
# S4 structure, but each warp only exchanges data within itself, so the warp-scope fence is
# enough; the CTA-wide fence at the end orders everything before the free of `s`.
from verifier.lang import *


@proc
def warp_local_exchange(nb: size, x: f32[nb, 64] @ CudaGmemLinear, y: f32[nb, 64] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for blk in cuda_tasks(0, nb):
            s: f32[64] @ CudaSmemLinear
            for w in cuda_threads(0, 2, unit=cuda_warp):
                for l in cuda_threads(0, 32):
                    s[32 * w + l] = x[blk, 32 * w + l]
                Fence(cuda_in_order, cuda_in_order)
                for l in cuda_threads(0, 32):
                    y[blk, 32 * w + l] = s[32 * w + 31 - l]
            Fence(cuda_in_order, cuda_in_order)
