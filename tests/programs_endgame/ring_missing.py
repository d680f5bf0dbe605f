# expect: ring_missing rejected ERR-L04
# An endgame mbarrier (CudaMbarrierPreArrive) without a `@ ring_buffer_by` dimension: upstream's
# lowering needs one (DIAL-2, "missing (non-distributed) managed ring buffer dimension").
from verifier.lang import *


@proc
def ring_missing():
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[1] @ CudaMbarrierPreArrive(0)
            Arrive(cuda_in_order) >> bar[0]
            Await(bar[0], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
