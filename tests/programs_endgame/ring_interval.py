# expect: ring_interval rejected ERR-A26
# An Arrive naming every element of the ring dimension (`bar[0:K]`): a ring index is a point
# (DIAL-2, "cannot have interval on managed ring buffer dimension").
from verifier.lang import *


@proc
def ring_interval(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[K @ ring_buffer_by(2)] @ CudaMbarrier
            for k in seq(0, K):
                Arrive(cuda_in_order) >> bar[0:K]
                Await(bar[k], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
