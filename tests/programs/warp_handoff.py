# expect: warp_handoff proved
# Warp specialisation: warp 0 fills SMEM, a CTA-wide fence at task level, warp 1 reads it reversed.
from verifier.lang import *


@proc
def warp_handoff(nb: size, x: f32[nb, 32] @ CudaGmemLinear, y: f32[nb, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for blk in cuda_tasks(0, nb):
            s: f32[32] @ CudaSmemLinear
            with CudaWarps(0, 1):
                for l in cuda_threads(0, 32):
                    s[l] = x[blk, l]
            Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(1, 2):
                for l in cuda_threads(0, 32):
                    y[blk, l] = s[31 - l] * 2.0
            Fence(cuda_in_order, cuda_in_order)
