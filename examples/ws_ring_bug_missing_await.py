# expect: ws_ring_bug_missing_await rejected ERR-A27
# The consumer's Await(full, ...) is deleted (language.md L3 variant). `full` then has Arrives but
# no Await: LANG-5.10 "missing Await" (ERR-A27). The same program also breaks the guard
# alternation (LANG-5.16: the consumer's Arrive >> empty lacks its preceding Await(full), ERR-A32);
# the per-variable existence rule LANG-5.10 is expected to be reported first.
from verifier.lang import *

R = 3


@proc
def ws_ring_bug_missing_await(T: size, K: size, inp: f32[T, K, 32] @ CudaGmemLinear, y: f32[T, K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, T):
            buf: f32[R, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~R)
                    for l in cuda_threads(0, 32):
                        buf[k % R, l] = inp[task, k, l]
                    Arrive(cuda_in_order) >> full
                with CudaWarps(1, 2):
                    for l in cuda_threads(0, 32):
                        y[task, k, l] = buf[k % R, 31 - l]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)
