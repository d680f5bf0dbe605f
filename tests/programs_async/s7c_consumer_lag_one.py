# expect: s7c_consumer_lag_one refuted RAW buf 26
# semantics.md S7c: consumer Await(full, cuda_in_order, ~1): await #0 is a skip, so at k = 0
# consumer lane 0 reads buf[0, 31] (written by producer lane 31) unsynchronized
# -> RAW HAZARD @ buf[0, 31]; counterexample K = 1.
from verifier.lang import *

R = 3


@proc
def s7c_consumer_lag_one(K: size, inp: f32[K, 32] @ CudaGmemLinear, y: f32[K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            buf: f32[R, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~R)
                    for l in cuda_threads(0, 32):
                        buf[k % R, l] = inp[k, l]
                    Arrive(cuda_in_order) >> full
                with CudaWarps(1, 2):
                    Await(full, cuda_in_order, ~1)
                    for l in cuda_threads(0, 32):
                        y[k, l] = buf[k % R, 31 - l]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)
