# expect: s7e_no_final_fence_bars_first refuted WAW buf 19
# semantics.md S7e with the barriers allocated before buf, so that buf is freed first (frees
# run in reverse allocation order, SEM-4.7). The free of buf is a write by all 64 threads; the
# record of the last write to a slot grants flags only to its writer lane and (through the
# consumer's Await(full)) the consumer warp, so the other producer lanes lack temp
# -> WAW HAZARD @ free(buf[...]) (mutate records are checked before read records), reported at
# the allocation of buf; counterexample K = 1.
from verifier.lang import *

R = 3


@proc
def s7e_no_final_fence_bars_first(K: size, inp: f32[K, 32] @ CudaGmemLinear, y: f32[K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            buf: f32[R, 32] @ CudaSmemLinear
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~R)
                    for l in cuda_threads(0, 32):
                        buf[k % R, l] = inp[k, l]
                    Arrive(cuda_in_order) >> full
                with CudaWarps(1, 2):
                    Await(full, cuda_in_order, ~0)
                    for l in cuda_threads(0, 32):
                        y[k, l] = buf[k % R, 31 - l]
                    Arrive(cuda_in_order) >> empty
