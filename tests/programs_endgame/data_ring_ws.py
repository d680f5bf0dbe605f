# expect: data_ring_ws proved
# A warp-specialized pipeline through a managed ring buffer of SMEM (specs/dialects.md DIAL-18):
# `buf: f32[K @ ring_buffer_by(RING), 128].ring_guarded_by(empty)` has K logical k-tiles in RING
# physical slots (k-tile k in slot k % RING). `empty` guards it: k-tile k's slot is handed over
# by the Await on empty[k] (pre-arrived for k < RING, the ring starts empty) and released by the
# consumers' Arrive on empty[k + RING] after they read it; `full[k]` tells the consumers k-tile
# k is stored. Proved for every K: each k-tile's accesses come after its handoff, and the
# consumers' reads of k-tile k are ordered before the producer's writes of k-tile k + RING, the
# same slot, through empty[k + RING].
from verifier.lang import *

RING = 3
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def data_ring_ws(K: size, A: f32[K, 128] @ CudaGmemLinear, out: f32[K, 128] @ CudaGmemLinear):
    assert K >= 1
    with CudaDeviceFunction(warp_config=warps):
        for task in cuda_tasks(0, 1):
            full: barrier[K @ ring_buffer_by(RING)] @ CudaMbarrier
            empty: barrier[(K + RING) @ ring_buffer_by(RING)] @ CudaMbarrierPreArrive(RING)
            buf: f32[K @ ring_buffer_by(RING), 128].ring_guarded_by(empty) @ CudaSmemLinear
            for k in seq(0, K):
                with CudaWarps(name="producer"):
                    Await(empty[k], cuda_temporal, 0)
                    for t in cuda_threads(0, 128):
                        buf[k, t] = A[k, t]
                    Arrive(cuda_in_order) >> full[k]
                with CudaWarps(name="consumer"):
                    Await(full[k], cuda_in_order, 0)
                    for t in cuda_threads(0, 128):
                        out[k, t] = buf[k, t]
                    Arrive(cuda_in_order) >> empty[k + RING]
            Fence(cuda_in_order, cuda_in_order)
