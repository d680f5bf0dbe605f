# expect: s7b_producer_lag_minus_one proved
# semantics.md S7b: Await(empty, cuda_temporal, ~(R-1)): more conservative (2-deep mbarrier ring,
# the producer runs at most R - 1 iterations ahead); producer await #k retires the consumer's
# reads up to k - R + 1, which include the reads of slot k % R at k - R.
from verifier.lang import *

R = 3


@proc
def s7b_producer_lag_minus_one(K: size, inp: f32[K, 32] @ CudaGmemLinear, y: f32[K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            buf: f32[R, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~(R - 1))
                    for l in cuda_threads(0, 32):
                        buf[k % R, l] = inp[k, l]
                    Arrive(cuda_in_order) >> full
                with CudaWarps(1, 2):
                    Await(full, cuda_in_order, ~0)
                    for l in cuda_threads(0, 32):
                        y[k, l] = buf[k % R, 31 - l]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)
