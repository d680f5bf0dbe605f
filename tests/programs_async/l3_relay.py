# expect: l3_relay proved
# language.md Example L3: named warp specialization (prod, cons), guarded mbarrier pair, two-slot
# ring: depth = lag(full) + lag(empty) = 0 + 2 = 2. Producer await #i (lag 2) pairs with consumer
# arrive #(i - 2), ordering the reads of slot i % 2 before the overwrite; consumer await #i pairs
# with producer arrive #i. The final CTA fence covers buf and the mbarrier storage.
from verifier.lang import *

cfg = [CudaWarpConfig("prod", 1), CudaWarpConfig("cons", 1)]


@proc
def l3_relay(n: size, src: f32[n, 32] @ CudaGmemLinear, dst: f32[n, 32] @ CudaGmemLinear):
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
            Fence(cuda_in_order, cuda_in_order)
