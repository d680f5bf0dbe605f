# expect: smem_matmul_bug_warpfence refuted RAW B_s 32
# First fence narrowed to warp scope (each warp fences itself). A_s[ty, k] is written by thread
# 16 * ty + k, in the reader's own warp, so A_s reads pass; B_s[k, tx] is written by thread
# 16 * k + tx: thread (0, 0) fails at k = 2 reading B_s[2, 0] (written by warp 1).
from verifier.lang import *


@proc
def smem_matmul_bug_warpfence(M: size, N: size, K: size, A: f32[M, K] @ CudaGmemLinear, B: f32[K, N] @ CudaGmemLinear, C: f32[M, N] @ CudaGmemLinear):
    assert M % 16 == 0
    assert N % 16 == 0
    assert K % 16 == 0
    with CudaDeviceFunction(blockDim=256):
        for mt in cuda_tasks(0, M / 16):
            for nt in cuda_tasks(0, N / 16):
                A_s: f32[16, 16] @ CudaSmemLinear
                B_s: f32[16, 16] @ CudaSmemLinear
                acc: f32[16, 16] @ CudaRmem
                for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                    for tx in cuda_threads(0, 16, unit=cuda_thread):
                        acc[ty, tx] = 0.0
                for kt in seq(0, K / 16):
                    for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                        for tx in cuda_threads(0, 16, unit=cuda_thread):
                            A_s[ty, tx] = A[16 * mt + ty, 16 * kt + tx]
                            B_s[ty, tx] = B[16 * kt + ty, 16 * nt + tx]
                    for w in cuda_threads(0, 8, unit=cuda_warp):
                        Fence(cuda_in_order, cuda_in_order)
                    for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                        for tx in cuda_threads(0, 16, unit=cuda_thread):
                            for k in seq(0, 16):
                                acc[ty, tx] += A_s[ty, k] * B_s[k, tx]
                    Fence(cuda_in_order, cuda_in_order)
                for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                    for tx in cuda_threads(0, 16, unit=cuda_thread):
                        C[16 * mt + ty, 16 * nt + tx] = acc[ty, tx]
