# expect: data_ring_ws_bug_reorder_await refuted RAW buf L22
# data_ring_ws.py with the producer's Await on empty[k] moved after its store: k-tile k is
# stored before its slot was handed over (upstream's use_before_alloc, DIAL-18); for k >= RING
# the store also races with the consumers' read of k-tile k - RING in the same slot.
from verifier.lang import *

RING = 3
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def data_ring_ws_bug_reorder_await(K: size, A: f32[K, 128] @ CudaGmemLinear, out: f32[K, 128] @ CudaGmemLinear):
    assert K >= 1
    with CudaDeviceFunction(warp_config=warps):
        for task in cuda_tasks(0, 1):
            full: barrier[K @ ring_buffer_by(RING)] @ CudaMbarrier
            empty: barrier[(K + RING) @ ring_buffer_by(RING)] @ CudaMbarrierPreArrive(RING)
            buf: f32[K @ ring_buffer_by(RING), 128].ring_guarded_by(empty) @ CudaSmemLinear
            for k in seq(0, K):
                with CudaWarps(name="producer"):
                    for t in cuda_threads(0, 128):
                        buf[k, t] = A[k, t]
                    Await(empty[k], cuda_temporal, 0)
                    Arrive(cuda_in_order) >> full[k]
                with CudaWarps(name="consumer"):
                    Await(full[k], cuda_in_order, 0)
                    for t in cuda_threads(0, 128):
                        out[k, t] = buf[k, t]
                    Arrive(cuda_in_order) >> empty[k + RING]
            Fence(cuda_in_order, cuda_in_order)
