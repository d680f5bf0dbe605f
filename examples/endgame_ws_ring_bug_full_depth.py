# expect: endgame_ws_ring_bug_full_depth refuted WAR full 26
# endgame_ws_ring with `full` stored in one physical mbarrier (`ring_buffer_by(1)`) while the
# producer runs up to RING k-tiles ahead: its Arrive on full[k] reuses the slot of full[k - 1]
# before the consumers' Await on full[k - 1] is ordered before it (they release only empty[k - 1
# + RING], which the producer awaits RING - 1 k-tiles later). The slot's recycling write
# (DIAL-7) races with that Await's read: the ring overrun of SEM-6.8, as a storage race.
from verifier.lang import *

RING = 3
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def endgame_ws_ring_bug_full_depth(K: size, A: f32[K, 128] @ CudaGmemLinear, out: f32[K, 128] @ CudaGmemLinear):
    assert K >= 1
    with CudaDeviceFunction(warp_config=warps):
        for task in cuda_tasks(0, 1):
            buf: f32[RING, 128] @ CudaSmemLinear
            full: barrier[K @ ring_buffer_by(1)] @ CudaMbarrier
            empty: barrier[(K + RING) @ ring_buffer_by(RING)] @ CudaMbarrierPreArrive(RING)
            for k in seq(0, K):
                with CudaWarps(name="producer"):
                    Await(empty[k], cuda_temporal, 0)
                    for t in cuda_threads(0, 128):
                        buf[k % RING, t] = A[k, t]
                    Arrive(cuda_in_order) >> full[k]
                with CudaWarps(name="consumer"):
                    Await(full[k], cuda_in_order, 0)
                    for t in cuda_threads(0, 128):
                        out[k, t] = buf[k % RING, t]
                    Arrive(cuda_in_order) >> empty[k + RING]
            Fence(cuda_in_order, cuda_in_order)
