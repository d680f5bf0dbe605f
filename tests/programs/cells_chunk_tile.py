# expect: cells_chunk_tile proved
# Histories that differ inside a tile (Choice M14): each of 32 threads cp.async-copies a 4-element
# chunk of the 16 x 8 SMEM tile (so every chunk's history names another thread), a CTA fence
# publishes them, then one sync-free region loads the whole tile as an mma A fragment 64 times
# (a batched region whose box covers chunks of 32 different histories).
from verifier.lang import *


@proc
def cells_chunk_tile(n: size, A: f32[n, 16, 8] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for b in cuda_tasks(0, n):
            A_s: f32[16, 8] @ CudaSmemLinear
            cg: barrier[32] @ CudaCommitGroup
            for t in cuda_threads(0, 32):
                Sm80_cp_async_f32(A_s[t / 2, 4 * (t % 2) : 4 * (t % 2) + 4], A[b, t / 2, 4 * (t % 2) : 4 * (t % 2) + 4], size=4)
                Arrive(Sm80_cp_async, 1) >> cg[t]
                Await(cg[t], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
            for w in cuda_threads(0, 1, unit=cuda_warp):
                for kk in seq(0, 64):
                    A_r: f32[16, 8] @ Sm80_RmemMatrixA(16, 8)
                    Sm80_mma_load_a_row_major_tf32(A_r[:, :], A_s[:, :], K=8)
            Fence(cuda_in_order, cuda_in_order)
