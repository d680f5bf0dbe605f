# expect: l3_producer_temporal_full refuted RAW buf 27
# language.md L3 with the producer's Arrive on full using cuda_temporal: its first sync-tl has an
# empty full set, so it witnesses nothing (SEM-5.1, Decision D2) and attaches no pending await to
# the producer's writes; the consumer's Await(full) then retires nothing -> RAW HAZARD @ buf[0, 0]
# at i = 0 (consumer lane 0 reads what producer lane 0 wrote); counterexample n = 1.
from verifier.lang import *

cfg = [CudaWarpConfig("prod", 1), CudaWarpConfig("cons", 1)]


@proc
def l3_producer_temporal_full(n: size, src: f32[n, 32] @ CudaGmemLinear, dst: f32[n, 32] @ CudaGmemLinear):
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
                    Arrive(cuda_temporal, 1) >> full
                with CudaWarps(name="cons"):
                    Await(full, cuda_in_order, ~0)
                    for t in cuda_threads(0, 32):
                        dst[i, t] = buf[i % 2, t]
                    Arrive(cuda_in_order, 1) >> empty
            Fence(cuda_in_order, cuda_in_order)
