# expect: february_lagged proved
# expect: endgame_indexed proved
# One file, two procs, two dialects (DIAL-1 decides per proc): the same single-warp
# producer/consumer hand-off written with February's lagged Await and with endgame's ring.
from verifier.lang import *


@proc
def february_lagged(K: size, x: f32[K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            s: f32[32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~1)
                    for t in cuda_threads(0, 32):
                        s[t] = 1.0
                    Arrive(cuda_in_order) >> full
                with CudaWarps(1, 2):
                    Await(full, cuda_in_order, ~0)
                    for t in cuda_threads(0, 32):
                        x[k, t] = s[t]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)


@proc
def endgame_indexed(K: size, x: f32[K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            s: f32[32] @ CudaSmemLinear
            full: barrier[K @ ring_buffer_by(1)] @ CudaMbarrier
            empty: barrier[(K + 1) @ ring_buffer_by(1)] @ CudaMbarrierPreArrive(1)
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty[k], cuda_temporal, 0)
                    for t in cuda_threads(0, 32):
                        s[t] = 1.0
                    Arrive(cuda_in_order) >> full[k]
                with CudaWarps(1, 2):
                    Await(full[k], cuda_in_order, 0)
                    for t in cuda_threads(0, 32):
                        x[k, t] = s[t]
                    Arrive(cuda_in_order) >> empty[k + 1]
            Fence(cuda_in_order, cuda_in_order)
