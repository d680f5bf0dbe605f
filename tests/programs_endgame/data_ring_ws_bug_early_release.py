# expect: data_ring_ws_bug_early_release refuted WAR buf L23
# data_ring_ws.py with the consumers' release moved before their read: the Arrive on
# empty[k + RING] hands slot k % RING to k-tile k + RING while k-tile k is still being read, so
# the producer's store of k-tile k + RING races with that read (a WAR on the slot, DIAL-18).
from verifier.lang import *

RING = 3
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def data_ring_ws_bug_early_release(K: size, A: f32[K, 128] @ CudaGmemLinear, out: f32[K, 128] @ CudaGmemLinear):
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
                    Arrive(cuda_in_order) >> empty[k + RING]
                    for t in cuda_threads(0, 128):
                        out[k, t] = buf[k, t]
            Fence(cuda_in_order, cuda_in_order)
