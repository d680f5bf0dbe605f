# expect: endgame_ws_ring proved
# The warp-specialized ring of ws_ring.py written in the July 2026 (endgame) dialect
# (specs/dialects.md): `ring_buffer_by` barrier arrays indexed by iteration instead of lagged
# awaits. k-tile k of A passes through slot k % RING of `buf`. `full[k]` (one element per k-tile,
# RING physical mbarriers) completes when the producer warpgroup stored k-tile k; `empty` has
# K + RING elements, the first RING pre-arrived (`CudaMbarrierPreArrive(RING)`: the ring starts
# empty), and the consumers' Arrive on `empty[k + RING]` releases slot k % RING for k-tile
# k + RING. Each element is one-shot (DIAL-10): the producer's Await on empty[k] pairs with the
# consumers' arrive of k-tile k - RING (or the pre-arrive), the consumers' Await on full[k] with
# the producer's arrive of k-tile k (DIAL-4, DIAL-11). Elements k and k - RING share a physical
# mbarrier: the Arrive on full[k] recycles full[k - RING], whose Await the consumers finished
# before they released empty[k] (DIAL-7), and every access of full[k] comes after the Await on
# full[k - RING] that handed the slot over (DIAL-6); the `cuda_temporal` Await on `empty` is
# enough for both, ordering being all a slot needs. The final CTA fence orders every access
# before the frees (SEM-4.7, DIAL-12).
from verifier.lang import *

RING = 3
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def endgame_ws_ring(K: size, A: f32[K, 128] @ CudaGmemLinear, out: f32[K, 128] @ CudaGmemLinear):
    assert K >= 1
    with CudaDeviceFunction(warp_config=warps):
        for task in cuda_tasks(0, 1):
            buf: f32[RING, 128] @ CudaSmemLinear
            full: barrier[K @ ring_buffer_by(RING)] @ CudaMbarrier
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
