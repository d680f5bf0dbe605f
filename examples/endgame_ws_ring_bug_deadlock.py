# expect: endgame_ws_ring_bug_deadlock refuted deadlock full 26
# endgame_ws_ring with the consumers awaiting full[k + 1], the k-tile the producer stores only
# in the next iteration: in the sequential trace the Await comes before its Arrive, so the
# kernel hangs (DIAL-11, ERR-V07).
from verifier.lang import *

RING = 3
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def endgame_ws_ring_bug_deadlock(K: size, A: f32[K, 128] @ CudaGmemLinear, out: f32[K, 128] @ CudaGmemLinear):
    assert K >= 1
    with CudaDeviceFunction(warp_config=warps):
        for task in cuda_tasks(0, 1):
            buf: f32[RING, 128] @ CudaSmemLinear
            full: barrier[(K + 1) @ ring_buffer_by(RING)] @ CudaMbarrier
            empty: barrier[(K + RING) @ ring_buffer_by(RING)] @ CudaMbarrierPreArrive(RING)
            for k in seq(0, K):
                with CudaWarps(name="producer"):
                    Await(empty[k], cuda_temporal, 0)
                    for t in cuda_threads(0, 128):
                        buf[k % RING, t] = A[k, t]
                    Arrive(cuda_in_order) >> full[k]
                with CudaWarps(name="consumer"):
                    Await(full[k + 1], cuda_in_order, 0)
                    for t in cuda_threads(0, 128):
                        out[k, t] = buf[k % RING, t]
                    Arrive(cuda_in_order) >> empty[k + RING]
            Fence(cuda_in_order, cuda_in_order)
