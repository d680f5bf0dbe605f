# expect: l3_no_final_fence refuted WAR empty 19
# language.md L3 with the final Fence deleted. Frees run in reverse allocation order (SEM-4.7):
# empty first. Its counts balance (a = w = n), but its storage free (a write by all 64 threads)
# finds the storage read of the consumer's last Arrive >> empty (SEM-6.2) ordered only for the
# consumer warp -> WAR HAZARD @ free(empty[...]), reported at the allocation of empty;
# counterexample n = 1. (language.md names the failure of buf, WAW HAZARD @ free(buf[...]),
# which comes later in the trace since buf is freed last.)
from verifier.lang import *

cfg = [CudaWarpConfig("prod", 1), CudaWarpConfig("cons", 1)]


@proc
def l3_no_final_fence(n: size, src: f32[n, 32] @ CudaGmemLinear, dst: f32[n, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(warp_config=cfg):
        for blk in cuda_tasks(0, 1):
            buf: f32[2, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for i in seq(0, n):
                with CudaWarps(name="prod"):
                    Await(empty, cuda_in_order, ~2)
                    for t in cuda_threads(0, 32):
                        buf[i % 2, t] = src[i, t]
                    Arrive(cuda_in_order, 1) >> full
                with CudaWarps(name="cons"):
                    Await(full, cuda_in_order, ~0)
                    for t in cuda_threads(0, 32):
                        dst[i, t] = buf[i % 2, t]
                    Arrive(cuda_in_order, 1) >> empty
