# expect: l3_swapped rejected ERR-A32
# language.md L3 with the consumer's Await(full) and Arrive >> empty swapped: empty is guarded by
# full, so await-first is mandatory -> "expect Await(full, ...) before Arrive(...) >> empty"
# (LANG-5.16/5.17, ERR-A32).
from verifier.lang import *

cfg = [CudaWarpConfig("prod", 1), CudaWarpConfig("cons", 1)]


@proc
def l3_swapped(n: size, src: f32[n, 32] @ CudaGmemLinear, dst: f32[n, 32] @ CudaGmemLinear):
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
                    Arrive(cuda_in_order, 1) >> empty
                    for t in cuda_threads(0, 32):
                        dst[i, t] = buf[i % 2, t]
                    Await(full, cuda_in_order, ~0)
            Fence(cuda_in_order, cuda_in_order)
