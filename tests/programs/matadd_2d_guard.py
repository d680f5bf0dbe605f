# expect: matadd_2d_guard proved
# C = A + B over 16x16 tiles: 2-D task nest with rounded-up counts, 2-D thread nest, 2-D guard.
from verifier.lang import *


@proc
def matadd_2d_guard(M: size, N: size, A: f32[M, N] @ CudaGmemLinear, B: f32[M, N] @ CudaGmemLinear, C: f32[M, N] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for bi in cuda_tasks(0, (M + 15) / 16):
            for bj in cuda_tasks(0, (N + 15) / 16):
                for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                    for tx in cuda_threads(0, 16):
                        if 16 * bi + ty < M and 16 * bj + tx < N:
                            C[16 * bi + ty, 16 * bj + tx] = A[16 * bi + ty, 16 * bj + tx] + B[16 * bi + ty, 16 * bj + tx]
