# expect: s13_split_loops refuted deadlock empty 20
# semantics.md S13: S7 with producer and consumer hoisted into two separate seq loops, producer
# first. Statically fine (each loop body alternates its own pair), but sequentially the producer
# runs all K iterations first: its await #R on empty (a_max = 0) executes while empty.a = 0
# -> UNSATISFIABLE AWAIT @ empty (ERR-V07); counterexample K = R + 1 = 4.
from verifier.lang import *

R = 3


@proc
def s13_split_loops(K: size, inp: f32[K, 32] @ CudaGmemLinear, y: f32[K, 32] @ CudaGmemLinear):
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
            for k in seq(0, K):
                with CudaWarps(1, 2):
                    Await(full, cuda_in_order, ~0)
                    for l in cuda_threads(0, 32):
                        y[k, l] = buf[k % R, 31 - l]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)
