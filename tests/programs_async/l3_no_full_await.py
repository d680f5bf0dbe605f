# expect: l3_no_full_await rejected ERR-A27
# language.md L3 with Await(full, ...) deleted: `full` has no Await (LANG-5.10, ERR-A27 "missing
# Await"). The guard alternation of empty (LANG-5.16, ERR-A32) is broken too; the existence rule is
# expected to be reported first.
from verifier.lang import *

cfg = [CudaWarpConfig("prod", 1), CudaWarpConfig("cons", 1)]


@proc
def l3_no_full_await(n: size, src: f32[n, 32] @ CudaGmemLinear, dst: f32[n, 32] @ CudaGmemLinear):
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
                    for t in cuda_threads(0, 32):
                        dst[i, t] = buf[i % 2, t]
                    Arrive(cuda_in_order, 1) >> empty
            Fence(cuda_in_order, cuda_in_order)
