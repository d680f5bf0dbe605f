# expect: endgame_ws_ring_bug_late_await refuted WAR buf 22
# endgame_ws_ring with the producer's Await on empty[k] after its store of k-tile k into slot
# k % RING instead of before: the store is not ordered after the consumers' read of k-tile
# k - RING from that slot (the Await that would order it comes too late).
from verifier.lang import *

RING = 3
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def endgame_ws_ring_bug_late_await(K: size, A: f32[K, 128] @ CudaGmemLinear, out: f32[K, 128] @ CudaGmemLinear):
    assert K >= 1
    with CudaDeviceFunction(warp_config=warps):
        for task in cuda_tasks(0, 1):
            buf: f32[RING, 128] @ CudaSmemLinear
            full: barrier[K @ ring_buffer_by(RING)] @ CudaMbarrier
            empty: barrier[(K + RING) @ ring_buffer_by(RING)] @ CudaMbarrierPreArrive(RING)
            for k in seq(0, K):
                with CudaWarps(name="producer"):
                    for t in cuda_threads(0, 128):
                        buf[k % RING, t] = A[k, t]
                    Await(empty[k], cuda_temporal, 0)
                    Arrive(cuda_in_order) >> full[k]
                with CudaWarps(name="consumer"):
                    Await(full[k], cuda_in_order, 0)
                    for t in cuda_threads(0, 128):
                        out[k, t] = buf[k % RING, t]
                    Arrive(cuda_in_order) >> empty[k + RING]
            Fence(cuda_in_order, cuda_in_order)
