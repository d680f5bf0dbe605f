# expect: all_gather_loop_bug_await_first refuted deadlock bar 15
# multicast_all_gather_loop.py with each CTA's Await before its Arrive: the Await on bar[c, k]
# needs the CTA's own Arrive of iteration k, which comes after it in the CTA's program order,
# so no schedule satisfies it (DIAL-11): refuted at the Await, in iteration 0.
from verifier.lang import *

@proc
def all_gather_loop_bug_await_first(K: size):
    assert K >= 1
    with CudaDeviceFunction(clusterDim=4, blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[4, K @ ring_buffer_by(2)] @ CudaMbarrier
            for k in seq(0, K):
                for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                    Await(bar[c, k], cuda_in_order, 0)
                    Arrive(cuda_in_order, 1) >> bar[c, k] >> bar[:, k]
                Fence(cuda_in_order, cuda_in_order)
