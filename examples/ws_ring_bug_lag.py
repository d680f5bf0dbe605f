# expect: ws_ring_bug_lag refuted WAR buf 23
# semantics.md S7a: the producer awaits `empty` with ~(R + 1) instead of ~R. Producer await #R is
# still a skip (a_max = R - (R + 1) = -1), so at k = R lane 0 overwrites buf[0, 0] while the
# consumer's read of it at k = 0 (lane 31) has not been ordered before the write: nothing grants
# lane 0 temp on that read record -> WAR HAZARD @ buf[0, 0] (counterexample T = 1, K = R + 1 = 4).
# A real race: the producer may run R + 1 iterations ahead with only R slots.
from verifier.lang import *

R = 3


@proc
def ws_ring_bug_lag(T: size, K: size, inp: f32[T, K, 32] @ CudaGmemLinear, y: f32[T, K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, T):
            buf: f32[R, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~(R + 1))
                    for l in cuda_threads(0, 32):
                        buf[k % R, l] = inp[task, k, l]
                    Arrive(cuda_in_order) >> full
                with CudaWarps(1, 2):
                    Await(full, cuda_in_order, ~0)
                    for l in cuda_threads(0, 32):
                        y[task, k, l] = buf[k % R, 31 - l]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)
