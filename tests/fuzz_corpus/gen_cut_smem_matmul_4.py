# expect: smem_matmul proved
# Tiled shared-memory matmul C = A @ B, one 16x16 output tile per task, one output element per
# thread (thread 16 * ty + tx owns acc[ty, tx]). Per k-tile: load A_s and B_s, CTA fence (RAW),
# accumulate, CTA fence (protects the next k-tile's overwrite of A_s/B_s: WAR; the last one also
# orders the final reads before the free of A_s/B_s).
from verifier.lang import *


@proc
def smem_matmul(M: size, N: size, K: size, A: f32[M, K] @ CudaGmemLinear, B: f32[K, N] @ CudaGmemLinear, C: f32[M, N] @ CudaGmemLinear):
    assert M % 16 == 0
    assert N % 16 == 0
    assert K % 16 == 0
    with CudaDeviceFunction(blockDim=256):
        for mt in cuda_tasks(0, M / 16):
            for nt in cuda_tasks(0, N / 16):
                A_s: f32[16, 16] @ CudaSmemLinear
  