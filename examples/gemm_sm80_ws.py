# expect: gemm_sm80_ws proved
# Warp-specialized Sm80 GEMM C = A @ B (f32 data, tf32 mma.sync m16n8k8, the instructions of
# gemm_sm80.py) fed through an mbarrier ring. One 64 x 64 tile of C per task; 256 threads = two
# warpgroups, "producer" (warps 0-3, setmaxnreg.dec 40) and "consumer" (warps 4-7, setmaxnreg.inc
# 232; setmaxnreg is only emitted for sm_90a). A and B k-tiles (16 wide) pass through a RING = 3
# slot SMEM ring guarded by the mbarrier pair full / empty (empty: barrier(full)).
# Producer, k-tile kt: Await(empty, cuda_temporal, ~RING) -- the first RING awaits are skips (the
# ring starts empty); await #kt pairs with consumer arrive #(kt - RING), which released slot
# kt % RING, and orders the consumers' fragment loads of that slot before the overwrite (WAR needs
# only temp; cp.async consumes cuda2) -- then each producer thread cp.asyncs 2 + 2 chunks of 4
# floats of k-tile kt into slot kt % RING, and the warpgroup arrives on `full` with
# Arrive(Sm80_cp_async) = cp.async.mbarrier.arrive.noinc, which fires per thread once that
# thread's cp.asyncs have landed: arrive #kt covers exactly the copies of k-tile kt.
# Consumer, k-tile kt: Await(full, cuda_in_order, ~0) pairs with producer arrive #kt and makes all
# producer threads' copies of k-tile kt fully visible to the four consumer warps (RAW); the warps
# (2 x 2, each a 32 x 32 sub-tile = 2 x 4 m16n8 accumulators) load their fragments from slot
# kt % RING and accumulate, then Arrive(cuda_in_order) >> empty releases the slot.
# Ring depth = lag(full) + lag(empty) = 0 + RING = 3 mbarriers each (LANG-5.19): the producer runs
# at most RING k-tiles ahead of the consumers, and a consumer never reads a slot before the
# producer's arrive of that k-tile completed.
# The WAW between a cp.async and the producer's own cp.async into the same slot RING k-tiles
# later is ordered through the consumer warps: arrive #kt on `full` witnesses the copies of
# k-tile kt, the consumers' await #kt augments them, their arrive #kt on `empty` witnesses them
# again and the producer's await #(kt + RING) grants temp (a two-event chain through a middle
# thread of the consumer warpgroup, specs/verification.md). Each Arrive on `full` also witnesses
# its own read of the mbarrier storage (SEM-6.2, 6.3), which the consumers' awaits and the final
# CTA fence carry to the free of `full`.
# At the end full and empty have a = w = K / 16 (the last RING arrives on empty are never awaited,
# allowed for await-indexed barriers), and the CTA fence orders every access of the ring and of
# the mbarrier storage before the frees.
from verifier.lang import *

RING = 3

warps = [CudaWarpConfig("producer", 4, setmaxnreg_dec=40),
         CudaWarpConfig("consumer", 4, setmaxnreg_inc=232)]


@proc
def gemm_sm80_ws(M: size, N: size, K: size, A: f32[M, K] @ CudaGmemLinear, B: f32[K, N] @ CudaGmemLinear, C: f32[M, N] @ CudaGmemLinear):
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
                        # Wait until the consumers released slot kt % RING (k-tile kt - RING).
                        Await(empty, cuda_temporal, ~RING)
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
# test: slow-differential (the abstract machine at three sizes takes about a minute)
