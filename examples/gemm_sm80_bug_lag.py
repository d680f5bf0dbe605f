# expect: gemm_sm80_bug_lag refuted WAR A_s 44
# gemm_sm80_ws.py with the "~lag off by one": the producer awaits `empty` with ~(RING + 1)
# instead of ~RING, so its first RING + 1 awaits are skips. At kt = RING (a_max = RING - (RING + 1)
# = -1, still a skip) producer thread 0 cp.asyncs k-tile RING into slot 0, A_s[0, 0, 0:4], while
# the reads of slot 0 by consumer warp (0, 0) (threads 128..159, first A fragment of k-tile 0)
# were never ordered before it: the consumers' arrive #0 on `empty` is paired with no await yet.
# WAR HAZARD @ A_s[0, 0, 0] at the producer's cp.async (B_s[0, 0, 0] fails the same way at the
# next line); counterexample M = N = 64, K = 80 (any K >= 16 * (RING + 1) works), replayed on the
# abstract machine. A real race: with RING slots the producer may overwrite a slot the consumers
# are still reading.
from verifier.lang import *

RING = 3

warps = [CudaWarpConfig("producer", 4, setmaxnreg_dec=40),
         CudaWarpConfig("consumer", 4, setmaxnreg_inc=232)]


@proc
def gemm_sm80_bug_lag(M: size, N: size, K: size, A: f32[M, K] @ CudaGmemLinear, B: f32[K, N] @ CudaGmemLinear, C: f32[M, N] @ CudaGmemLinear):
    assert M % 64 == 0
    assert N % 64 == 0
    assert K % 16 == 0
    with CudaDeviceFunction(warp_config=warps):
        for m in cuda_tasks(0, M / 64):
            for n in cuda_tasks(0, N / 64):
                A_s: f32[RING, 64, 16] @ CudaSmemLinear
                B_s: f32[RING, 16, 64] @ CudaSmemLinear
                full: barrier @ CudaMbarrier
                empty: barrier(full) @ CudaMbarrier
                D: f32[2, 2, 2, 4, 16, 8] @ Sm80_RmemMatrixD(16, 8)
                with CudaWarps(name="consumer"):
                    for mw in cuda_threads(0, 2, unit=2 * cuda_warp):
                        for nw in cuda_threads(0, 2, unit=cuda_warp):
                            for i in seq(0, 2):
                                for j in seq(0, 4):
                                    Sm80_mma_zero_d_tf32(D[mw, nw, i, j, :, :])
                for kt in seq(0, K / 16):
                    with CudaWarps(name="producer"):
                        # BUG: lag RING + 1 lets the producer run RING + 1 k-tiles ahead.
                        Await(empty, cuda_temporal, ~(RING + 1))
                        for t in cuda_threads(0, 128):
                            for r in seq(0, 2):
                                Sm80_cp_async_f32(A_s[kt % RING, 32 * r + t / 4, 4 * (t % 4) : 4 * (t % 4) + 4], A[64 * m + 32 * r + t / 4, 16 * kt + 4 * (t % 4) : 16 * kt + 4 * (t % 4) + 4], size=4)
                            for r in seq(0, 2):
                                Sm80_cp_async_f32(B_s[kt % RING, 8 * r + t / 16, 4 * (t % 16) : 4 * (t % 16) + 4], B[16 * kt + 8 * r + t / 16, 64 * n + 4 * (t % 16) : 64 * n + 4 * (t % 16) + 4], size=4)
                        # Completes when every producer thread's copies of k-tile kt landed.
                        Arrive(Sm80_cp_async, 1) >> full
                    with CudaWarps(name="consumer"):
                        # Wait for k-tile kt (RAW).
                        Await(full, cuda_in_order, ~0)
                        for mw in cuda_threads(0, 2, unit=2 * cuda_warp):
                            for nw in cuda_threads(0, 2, unit=cuda_warp):
                                for kk in seq(0, 2):
                                    A_r: f32[2, 16, 8] @ Sm80_RmemMatrixA(16, 8)
                                    B_r: f32[4, 8, 8] @ Sm80_RmemMatrixB(8, 8)
                                    for i in seq(0, 2):
                                        Sm80_mma_load_a_row_major_tf32(A_r[i, :, :], A_s[kt % RING, 32 * mw + 16 * i : 32 * mw + 16 * i + 16, 8 * kk : 8 * kk + 8], K=8)
                                    for j in seq(0, 4):
                                        Sm80_mma_load_b_row_major_tf32(B_r[j, :, :], B_s[kt % RING, 8 * kk : 8 * kk + 8, 32 * nw + 8 * j : 32 * nw + 8 * j + 8], K=8)
                                    for i in seq(0, 2):
                                        for j in seq(0, 4):
                                            Sm80_mma_tf32(D[mw, nw, i, j, :, :], A_r[i, :, :], B_r[j, :, :], K=8)
                        # Release slot kt % RING to the producer (WAR).
                        Arrive(cuda_in_order, 1) >> empty
                with CudaWarps(name="consumer"):
                    for mw in cuda_threads(0, 2, unit=2 * cuda_warp):
                        for nw in cuda_threads(0, 2, unit=cuda_warp):
                            for i in seq(0, 2):
                                for j in seq(0, 4):
                                    Sm80_mma_store_d_row_major_tf32(C[64 * m + 32 * mw + 16 * i : 64 * m + 32 * mw + 16 * i + 16, 64 * n + 32 * nw + 8 * j : 64 * n + 32 * nw + 8 * j + 8], D[mw, nw, i, j, :, :])
                Fence(cuda_in_order, cuda_in_order)
# test: slow-differential (the example test replays its counterexample in about 20 s; the differential test runs the machine at three sizes)
