# expect: ring_oob refuted out-of-bounds bar 15
# An Arrive on ring element k + 2 of a barrier with K + 1 elements: past the extent at the last
# iteration (SEM-4.3; the ring index is bounds-checked like any index, DIAL-2), and Await bar[1]
# pairs with an arrive that never comes first (DIAL-11).
from verifier.lang import *

@proc
def ring_oob(K: size):
    assert K >= 1
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[(K + 1) @ ring_buffer_by(2)] @ CudaMbarrierPreArrive(1)
            for k in seq(0, K):
                Await(bar[k], cuda_in_order, 0)
                Arrive(cuda_in_order) >> bar[k + 2]
            Fence(cuda_in_order, cuda_in_order)
