# expect: gemm_sm80_bug_ring_index refuted WAW A_s 44
# gemm_sm80 with the producer's ring index off: k-tile kt + RING - 1 is issued into slot
# kt % RING (the slot about to be read) instead of (kt + RING - 1) % RING. At kt = 0 thread 0's
# cp.async into A_s[0, 0, 0:4] overwrites its own prologue copy of k-tile 0, which is still in
# flight (record: thread 0, Sm80, issue only; nothing retired it yet): the write-only mutate needs
# temp on {Sm80, cuda2} -> WAW HAZARD on A_s at the main-loop A cp.async.
# Counterexample M = N = 128, K = 96.
from verifier.lang import *

RING = 3


@proc
def gemm_sm80_bug_ring_index(M: size, N: size, K: size, A: f32[M, K] @ CudaGmemLinear, B: f32[K, N] @ CudaGmemLinear, C: f32[M, N] @ CudaGmemLinear):
    assert M % 128 == 0
    assert N % 128 == 0
    assert K % 32 == 0
    with CudaDeviceFunction(blockDim=256):
        for m in cuda_tasks(0, M / 128):
            for n in cuda_tasks(0, N / 128):
                A_s: f32[RING, 128, 32] @ CudaSmemLinear
                B_s: f32[RING, 32, 128] @ CudaSmemLinear
                cg: barrier[256] @ CudaCommitGroup
                D: f32[2, 4, 4, 4, 16, 8] @ Sm80_RmemMatrixD(16, 8)
                for mw in cuda_threads(0, 2, unit=4 * cuda_warp):
                    for nw in cuda_threads(0, 4, unit=cuda_warp):
                        for i in seq(0, 4):
                            for j in seq(0, 4):
                                Sm80_mma_zero_d_tf32(D[mw, nw, i, j, :, :])
                # Prologue: k-tiles 0 .. RING - 2 into slots 0 .. RING - 2, one commit group each.
                for t in cuda_threads(0, 256):
                    for p in seq(0, RING - 1):
                        if p < K / 32:
                            for r in seq(0, 4):
                                Sm80_cp_async_f32(A_s[p, 32 * r + t / 8, 4 * (t % 8) : 4 * (t % 8) + 4], A[128 * m + 32 * r + t / 8, 32 * p + 4 * (t % 8) : 32 * p + 4 * (t % 8) + 4], size=4)
                            for r in seq(0, 4):
                                Sm80_cp_async_f32(B_s[p, 8 * r + t / 32, 4 * (t % 32) : 4 * (t % 32) + 4], B[32 * p + 8 * r + t / 32, 128 * n + 4 * (t % 32) : 128 * n + 4 * (t % 32) + 4], size=4)
                        Arrive(Sm80_cp_async, 1) >> cg[t]
                for kt in seq(0, K / 32):
                    # Issue k-tile kt + RING - 1, then wait until this thread's copies of k-tile kt landed.
                    for t in cuda_threads(0, 256):
                        if kt + RING - 1 < K / 32:
                            for r in seq(0, 4):
                                Sm80_cp_async_f32(A_s[kt % RING, 32 * r + t / 8, 4 * (t % 8) : 4 * (t % 8) + 4], A[128 * m + 32 * r + t / 8, 32 * (kt + RING - 1) + 4 * (t % 8) : 32 * (kt + RING - 1) + 4 * (t % 8) + 4], size=4)
                            for r in seq(0, 4):
                                Sm80_cp_async_f32(B_s[kt % RING, 8 * r + t / 32, 4 * (t % 32) : 4 * (t % 32) + 4], B[32 * (kt + RING - 1) + 8 * r + t / 32, 128 * n + 4 * (t % 32) : 128 * n + 4 * (t % 32) + 4], size=4)
                        Arrive(Sm80_cp_async, 1) >> cg[t]
                        Await(cg[t], cuda_in_order, RING - 1)
                    # RAW: every thread's copies of k-tile kt become visible to every warp.
                    Fence(cuda_in_order, cuda_in_order)
                    for mw in cuda_threads(0, 2, unit=4 * cuda_warp):
                        for nw in cuda_threads(0, 4, unit=cuda_warp):
                            for kk in seq(0, 4):
                                A_r: f32[4, 16, 8] @ Sm80_RmemMatrixA(16, 8)
                                B_r: f32[4, 8, 8] @ Sm80_RmemMatrixB(8, 8)
                                for i in seq(0, 4):
                                    Sm80_mma_load_a_row_major_tf32(A_r[i, :, :], A_s[kt % RING, 64 * mw + 16 * i : 64 * mw + 16 * i + 16, 8 * kk : 8 * kk + 8], K=8)
                                for j in seq(0, 4):
                                    Sm80_mma_load_b_row_major_tf32(B_r[j, :, :], B_s[kt % RING, 8 * kk : 8 * kk + 8, 32 * nw + 8 * j : 32 * nw + 8 * j + 8], K=8)
                                for i in seq(0, 4):
                                    for j in seq(0, 4):
                                        Sm80_mma_tf32(D[mw, nw, i, j, :, :], A_r[i, :, :], B_r[j, :, :], K=8)
                    # WAR: the next iteration's cp.async overwrites slot kt % RING.
                    Fence(cuda_in_order, cuda_in_order)
                # Retire the trailing (empty) commit groups: a = w at the free of cg.
                for t in cuda_threads(0, 256):
                    Await(cg[t], cuda_in_order, 0)
                for mw in cuda_threads(0, 2, unit=4 * cuda_warp):
                    for nw in cuda_threads(0, 4, unit=cuda_warp):
                        for i in seq(0, 4):
                            for j in seq(0, 4):
                                Sm80_mma_store_d_row_major_tf32(C[128 * m + 64 * mw + 16 * i : 128 * m + 64 * mw + 16 * i + 16, 128 * n + 32 * nw + 8 * j : 128 * n + 32 * nw + 8 * j + 8], D[mw, nw, i, j, :, :])
                Fence(cuda_in_order, cuda_in_order)
# test: slow-differential (the example test replays one counterexample in about 10-25 s; the differential test runs the machine at three sizes)
