# expect: ring_temporal_producer proved
# Upstream's TMA-producer idiom on endgame rings (DIAL-6, DIAL-7): the producer arrives on `full`
# with cuda_temporal (it orders, it publishes nothing), the consumers release the slot on
# `empty`. Slot k % RING of `full` is recycled by the producer's Arrive on full[k] after the
# consumers awaited full[k - RING] and released empty[k], which the producer awaited: the
# temporal Arrive orders the producer's own earlier barrier operations, so the handoff of
# empty[k + RING] (awaited on empty[k] by the producer) reaches the consumers through full[k].
from verifier.lang import *

RING = 2
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def ring_temporal_producer(K: size, out: f32[K, 128] @ CudaGmemLinear):
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
                    Arrive(cuda_in_order) >> empty[k + RING]
            Fence(cuda_in_order, cuda_in_order)
