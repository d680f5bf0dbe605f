# expect: ring_guarded_by unsupported ERR-V11
# SMEM guarded by a ring barrier (`.ring_guarded_by(bar)`): outside the fragment (DIAL-9).
from verifier.lang import *


@proc
def ring_guarded_by(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[K @ ring_buffer_by(4)] @ CudaMbarrier
            smem: f32[K, 16].ring_guarded_by(bar) @ CudaSmemLinear
            for k in seq(0, K):
                Arrive(cuda_in_order) >> bar[k]
                Await(bar[k], cuda_in_order, 0)
