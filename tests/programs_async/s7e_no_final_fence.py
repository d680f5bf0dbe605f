# expect: s7e_no_final_fence refuted WAR empty 21
# semantics.md S7e: S7 without the final Fence. Frees run in reverse allocation order (SEM-4.7):
# empty, full, then buf. For empty the count check passes (a = w = K; the last R arrives are
# never awaited, which is allowed), then its storage is free-checked as a write by all 64 threads:
# the storage read of the consumer's last Arrive >> empty (k = K - 1; SEM-6.2) is ordered only
# for the consumer warp, so producer lanes lack temp -> WAR HAZARD @ free(empty[...]), reported
# at the allocation of empty (counterexample K = 1). semantics.md S7e names the later failure of
# buf (WAW HAZARD @ free(buf[...])); that one is only reached when the barriers are allocated
# before buf (s7e_no_final_fence_bars_first.py).
from verifier.lang import *

R = 3


@proc
def s7e_no_final_fence(K: size, inp: f32[K, 32] @ CudaGmemLinear, y: f32[K, 32] @ CudaGmemLinear):
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
                    Await(full, cuda_in_order, ~0)
                    for l in cuda_threads(0, 32):
                        y[k, l] = buf[k % R, 31 - l]
                    Arrive(cuda_in_order) >> empty
