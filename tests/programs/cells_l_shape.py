# expect: cells_l_shape proved
# An L-shaped history pattern inside a tile (Choice M14): thread 0 fills the 16 x 8 SMEM tile,
# a CTA fence, then thread 5 alone rewrites an L inside it (A_s[9, 3:6] and A_s[10:12, 3]) and a
# second CTA fence publishes that; one sync-free region then loads the whole tile as an mma A
# fragment 64 times. The L's elements differ in history from their neighbours on both
# dimensions, away from the tile's first row and column.
from verifier.lang import *


@proc
def cells_l_shape(n: size, A: f32[n, 16, 8] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for b in cuda_tasks(0, n):
            A_s: f32[16, 8] @ CudaSmemLinear
            for t in cuda_threads(0, 32):
                if t == 0:
                    for i in seq(0, 16):
                        for j in seq(0, 8):
                            A_s[i, j] = A[b, i, j]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 32):
                if t == 5:
                    for j in seq(3, 6):
                        A_s[9, j] = A[b, 0, j]
                    for i in seq(10, 12):
                        A_s[i, 3] = A[b, i, 0]
            Fence(cuda_in_order, cuda_in_order)
            for w in cuda_threads(0, 1, unit=cuda_warp):
                for kk in seq(0, 64):
                    A_r: f32[16, 8] @ Sm80_RmemMatrixA(16, 8)
                    Sm80_mma_load_a_row_major_tf32(A_r[:, :], A_s[:, :], K=8)
            Fence(cuda_in_order, cuda_in_order)
