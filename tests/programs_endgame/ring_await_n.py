# expect: ring_await_n rejected ERR-A29
# An endgame mbarrier Await with N = 1: each ring element is awaited whole (DIAL-4, N = 0).
from verifier.lang import *


@proc
def ring_await_n(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[K @ ring_buffer_by(2)] @ CudaMbarrier
            for k in seq(0, K):
                Arrive(cuda_in_order) >> bar[k]
                Await(bar[k], cuda_in_order, 1)
            Fence(cuda_in_order, cuda_in_order)
