# expect: l3_lag3 refuted WAR buf 21
# language.md L3 with ~2 -> ~3 on empty: producer await #2 is a skip, so at i = 2 producer lane 0
# overwrites buf[0, 0], still unordered after the consumer's read of it at i = 0 (consumer lane 0)
# -> WAR HAZARD @ buf[0, 0]; counterexample n = 3.
from verifier.lang import *

cfg = [CudaWarpConfig("prod", 1), CudaWarpConfig("cons", 1)]


@proc
def l3_lag3(n: size, src: f32[n, 32] @ CudaGmemLinear, dst: f32[n, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(warp_config=cfg):
        for blk in cuda_tasks(0, 1):
            buf: f32[2, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for i in seq(0, n):
                with CudaWarps(name="prod"):
                    Await(empty, cuda_in_order, ~3)
                    for t in cuda_threads(0, 32):
                        buf[i % 2, t] = src[i, t]
                    Arrive(cuda_in_order, 1) >> full
                with CudaWarps(name="cons"):
                    Await(full, cuda_in_order, ~0)
                    for t in cuda_threads(0, 32):
                        dst[i, t] = buf[i % 2, t]
                    Arrive(cuda_in_order, 1) >> empty
            Fence(cuda_in_order, cuda_in_order)
