# expect: ring_guarded_by rejected ERR-A16
# SMEM guarded by a ring barrier whose ring is on another dimension (the barrier's ring is its
# dimension 0, the data's its dimension 1): upstream's "has incorrect managed ring buffer
# dimension index to match" (DIAL-18), at the data's line.
from verifier.lang import *


@proc
def ring_guarded_by(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[K @ ring_buffer_by(4)] @ CudaMbarrier
            smem: f32[16, K @ ring_buffer_by(4)].ring_guarded_by(bar) @ CudaSmemLinear
            for k in seq(0, K):
                Arrive(cuda_in_order) >> bar[k]
                Await(bar[k], cuda_in_order, 0)
