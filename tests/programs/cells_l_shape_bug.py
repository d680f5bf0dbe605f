# expect: cells_l_shape_bug refuted RAW A_s 29
# cells_l_shape without the fence after thread 5 rewrites the L (A_s[9, 3:6], A_s[10:12, 3]):
# the warp's whole-tile fragment load in the batched region reads the L without visibility
# (RAW), while every element outside it (the tile's first row and column included) is fine, so
# a cell grid that missed a cut of the L would miss the hazard (Choice M14).
from verifier.lang import *


@proc
def cells_l_shape_bug(n: size, A: f32[n, 16, 8] @ CudaGmemLinear):
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
            for w in cuda_threads(0, 1, unit=cuda_warp):
                for kk in seq(0, 64):
                    A_r: f32[16, 8] @ Sm80_RmemMatrixA(16, 8)
                    Sm80_mma_load_a_row_major_tf32(A_r[:, :], A_s[:, :], K=8)
            Fence(cuda_in_order, cuda_in_order)
