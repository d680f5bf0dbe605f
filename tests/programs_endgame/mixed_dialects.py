# expect: mixed_dialects rejected ERR-P28
# One proc with an endgame ring (`@ ring_buffer_by`, line 12) and a February lagged Await
# (`~0`, line 15): a proc is written in one dialect (DIAL-1).
from verifier.lang import *


@proc
def mixed_dialects(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            full: barrier @ CudaMbarrier
            ring: barrier[K @ ring_buffer_by(2)] @ CudaMbarrier
            for k in seq(0, K):
                Arrive(cuda_in_order) >> full
                Await(full, cuda_in_order, ~0)
                Arrive(cuda_in_order) >> ring[k]
                Await(ring[k], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
