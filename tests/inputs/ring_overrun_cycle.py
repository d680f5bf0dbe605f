# examples/ws_ring.py with the producer's Await(empty, ...) moved after its Arrive >> full.
# Guard cycle full -> empty -> full, depth 0 + R = 3. Arrive #x on full now only follows the
# producer's await #(x - 1) on empty, which pairs with consumer arrive #(x - 1 - R) on empty:
# arrive #R on full reuses slot 0 with no non-trivial await on full ordered before it
# -> mbarrier ring overrun @ full (and a WAR on buf). Rejected statically by LANG-5.16
# (ERR-A32); with that rule off, SEM-6.8 refutes it (T = 1, K = R + 1).
from verifier.lang import *

R = 3


@proc
def ws_ring_late_await(T: size, K: size, inp: f32[T, K, 32] @ CudaGmemLinear, y: f32[T, K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, T):
            buf: f32[R, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    for l in cuda_threads(0, 32):
                        buf[k % R, l] = inp[task, k, l]
                    Arrive(cuda_in_order) >> full
                    Await(empty, cuda_temporal, ~R)
                with CudaWarps(1, 2):
                    Await(full, cuda_in_order, ~0)
                    for l in cuda_threads(0, 32):
                        y[task, k, l] = buf[k % R, 31 - l]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)
