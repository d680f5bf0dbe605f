# expect: all_gather_loop proved
# The all-gather of multicast_all_gather.py once per iteration k through a ring of depth 2
# (DIAL-11 for all K): in iteration k every CTA's Await on bar[c, k] needs the Arrives of all
# four CTAs of that iteration, which the lockstep schedule orders before it. The cluster Fence
# ends each iteration: the Arrive on bar[c, k] recycles the slot of bar[:, k - 2] in every
# CTA (DIAL-7), whose Awaits the sequential trace orders before it only through that Fence
# (without it the Awaits of CTAs later in the trace are not seen: refuted RAW on bar, stricter
# than the hardware, which orders them through the Await of iteration k - 1).
from verifier.lang import *

@proc
def all_gather_loop(K: size):
    assert K >= 1
    with CudaDeviceFunction(clusterDim=4, blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[4, K @ ring_buffer_by(2)] @ CudaMbarrier
            for k in seq(0, K):
                for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                    Arrive(cuda_in_order, 1) >> bar[c, k] >> bar[:, k]
                    Await(bar[c, k], cuda_in_order, 0)
                Fence(cuda_in_order, cuda_in_order)
