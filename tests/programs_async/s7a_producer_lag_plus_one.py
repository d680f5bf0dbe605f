# expect: s7a_producer_lag_plus_one refuted WAR buf 21
# semantics.md S7a: Await(empty, cuda_temporal, ~(R+1)). Producer await #R is still a skip, so at
# k = R lane 0's write of buf[0, 0] meets the consumer's unretired read of k = 0 (lane 31)
# -> WAR HAZARD @ buf[0, 0]; counterexample K = R + 1 = 4.
from verifier.lang import *

R = 3


@proc
def s7a_producer_lag_plus_one(K: size, inp: f32[K, 32] @ CudaGmemLinear, y: f32[K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            buf: f32[R, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~(R + 1))
                    for l in cuda_threads(0, 32):
                        buf[k % R, l] = inp[k, l]
                    Arrive(cuda_in_order) >> full
                with CudaWarps(1, 2):
                    Await(full, cuda_in_order, ~0)
                    for l in cuda_threads(0, 32):
                        y[k, l] = buf[k % R, 31 - l]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)
