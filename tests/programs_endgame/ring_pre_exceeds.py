# expect: ring_pre_exceeds rejected ERR-L04
# Three pre-arrived elements in a ring of two slots (DIAL-3: pre_arrive <= ring depth).
from verifier.lang import *


@proc
def ring_pre_exceeds(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[(K + 3) @ ring_buffer_by(2)] @ CudaMbarrierPreArrive(3)
            for k in seq(0, K):
                Await(bar[k], cuda_in_order, 0)
                Arrive(cuda_in_order) >> bar[k + 3]
            Fence(cuda_in_order, cuda_in_order)
