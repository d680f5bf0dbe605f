# expect: ring_bug_final_arrive refuted barrier-count empty 17
# DIAL-16 (upstream's free_missing_arrive, its test_coop_missing_final_arrive_war): the
# consumers skip their last release of `empty`, so element K + RING - 1 is never arrived on
# and the slot of element K - 1 is freed without being recycled.
from verifier.lang import *

RING = 2
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def ring_bug_final_arrive(K: size, out: f32[K, 128] @ CudaGmemLinear):
    assert K >= 1
    with CudaDeviceFunction(warp_config=warps):
        for task in cuda_tasks(0, 1):
            full: barrier[K @ ring_buffer_by(RING)] @ CudaMbarrier
            empty: barrier[(K + RING) @ ring_buffer_by(RING)] @ CudaMbarrierPreArrive(RING)
            for k in seq(0, K):
                with CudaWarps(name="producer"):
                    Await(empty[k], cuda_temporal, 0)
                    Arrive(cuda_temporal) >> full[k]
                with CudaWarps(name="consumer"):
                    Await(full[k], cuda_in_order, 0)
                    for t in cuda_threads(0, 128):
                        out[k, t] = 1.0
                    if k < K - 1:
                        Arrive(cuda_in_order) >> empty[k + RING]
            Fence(cuda_in_order, cuda_in_order)
