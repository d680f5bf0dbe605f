# expect: data_ring_store_bug_no_drain refuted WAR stage 22
# data_ring_store.py without the final drain of the TMA commit group: the last tile's TMA store
# may still read its slot of `stage` when the task ends (the next task's writes, or the CTA's
# exit, race with it). Refuted at `stage`'s free (DIAL-20): no thread saw the read complete.
# Endgame's sync_check refutes it at the same free: free_missing_arrive HAZARD @ free(stage[...]).
from verifier.lang import *

RING = 2


@proc
def data_ring_store_bug_no_drain(T: size, J: size, M: size, N: size,
                                 src: f32[T, J, 16, 32] @ CudaGmemLinear, C: f32[M, N] @ CudaGmemLinear):
    assert J >= 1
    assert M == 16 * T
    assert N == 32 * J
    assert stride(C, 1) == 1
    C_map = C[:, :] @ Sm90_tensorMap(128, 16, 32)
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            free: barrier[(J + RING) @ ring_buffer_by(RING)] @ CudaMbarrierPreArrive(RING)
            stage: f32[J @ ring_buffer_by(RING), 16, 32].ring_guarded_by(free) @ \
                Sm90_SmemSwizzled(128)
            cg: barrier @ Sm90_TmaCommitGroup
            for j in seq(0, J):
                Await(free[j], cuda_in_order, 0)
                for t in cuda_threads(0, 128):
                    for e in seq(0, 4):
                        stage[j, t / 8, 4 * (t % 8) + e] = src[task, j, t / 8, 4 * (t % 8) + e]
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                with CudaWarps(0, 1):
                    Sm90_tma_store_2d(C_map[16 * task:16 * task + 16, 32 * j:32 * j + 32],
                                      stage[j, :, :], size0=16, size1=32, dst=f32, src=f32,
                                      swizzle=128, smem_box=(16, 32))
                    Arrive(tma_to_gmem_async, 1) >> cg
                    Await(cg, cuda_in_order, 1)
                    if j >= 1:
                        Arrive(cuda_in_order, 1) >> free[j + 1]
            with CudaWarps(0, 1):
                Arrive(cuda_in_order, 1) >> free[J + 1]
