# expect: data_ring_store proved
# A pipelined TMA store through a managed ring buffer of SMEM (specs/dialects.md DIAL-18,
# DIAL-20), the pattern of endgame's ping-pong GEMM epilogue: each task stages J tiles in a
# 2-slot data ring `stage` guarded by `free`; warp 0 stores tile j by TMA, waits for all but
# the last store (Await(cg, cuda_in_order, 1)) and releases the slot of tile j - 1. After the
# loop it drains the last store (Await(cg, cuda_in_order, 0)). No Fence ends the task: at the
# end of `stage`'s scope every access is complete (warp 0 waited for every TMA read), which is
# all the next task's instance needs (the lowering's CTA barrier at `free`'s allocation orders
# it, DIAL-20). Proved for every T and J; SEM-4.7 (every thread must see each access) refutes it.
# Endgame's sync_check finds no hazard either (T=2, J=3).
from verifier.lang import *

RING = 2


@proc
def data_ring_store(T: size, J: size, M: size, N: size,
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
                Await(cg, cuda_in_order, 0)
                Arrive(cuda_in_order, 1) >> free[J + 1]
