# expect: ring_temporal_producer_bug_early refuted RAW empty 22
# DIAL-6: the consumers release empty[k + RING] before awaiting full[k]: nothing orders the
# producer's Await on empty[k] (the slot's previous phase) before that Arrive.
from verifier.lang import *

RING = 2
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def ring_temporal_producer_bug_early(K: size, out: f32[K, 128] @ CudaGmemLinear):
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
                    Arrive(cuda_in_order) >> empty[k + RING]
                    Await(full[k], cuda_in_order, 0)
                    for t in cuda_threads(0, 128):
                        out[k, t] = 1.0
            Fence(cuda_in_order, cuda_in_order)
