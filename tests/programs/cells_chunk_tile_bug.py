# expect: cells_chunk_tile_bug refuted RAW A_s 21
# cells_chunk_tile without the CTA fence after the copies: thread t's Await makes its own chunk
# visible to thread t only, so the warp's whole-tile fragment load (a batched region over chunks
# of 32 different histories, Choice M14) reads chunks other threads copied: RAW.
from verifier.lang import *


@proc
def cells_chunk_tile_bug(n: size, A: f32[n, 16, 8] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for b in cuda_tasks(0, n):
            A_s: f32[16, 8] @ CudaSmemLinear
            cg: barrier[32] @ CudaCommitGroup
            for t in cuda_threads(0, 32):
                Sm80_cp_async_f32(A_s[t / 2, 4 * (t % 2) : 4 * (t % 2) + 4], A[b, t / 2, 4 * (t % 2) : 4 * (t % 2) + 4], size=4)
                Arrive(Sm80_cp_async, 1) >> cg[t]
                Await(cg[t], cuda_in_order, 0)
            for w in cuda_threads(0, 1, unit=cuda_warp):
                for kk in seq(0, 64):
                    A_r: f32[16, 8] @ Sm80_RmemMatrixA(16, 8)
                    Sm80_mma_load_a_row_major_tf32(A_r[:, :], A_s[:, :], K=8)
            Fence(cuda_in_order, cuda_in_order)
