# expect: ring_two_dims rejected ERR-A16
# Two managed ring-buffer dimensions in one barrier array (DIAL-2).
from verifier.lang import *


@proc
def ring_two_dims(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[4 @ ring_buffer_by(2), K @ ring_buffer_by(2)] @ CudaMbarrier
            for k in seq(0, K):
                Arrive(cuda_in_order) >> bar[0, k]
                Await(bar[0, k], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
