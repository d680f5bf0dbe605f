# expect: ring_arrive_count rejected ERR-A24
# The first Arrive on `bar` runs on one warp, the later ones on two: an mbarrier expects one
# arrival count (DIAL-5, "inconsistent thread count").
from verifier.lang import *


@proc
def ring_arrive_count(K: size):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            bar: barrier[(K + 1) @ ring_buffer_by(2)] @ CudaMbarrier
            with CudaWarps(0, 1):
                Arrive(cuda_in_order) >> bar[0]
            for k in seq(0, K):
                Await(bar[k], cuda_in_order, 0)
                Arrive(cuda_in_order) >> bar[k + 1]
            Fence(cuda_in_order, cuda_in_order)
