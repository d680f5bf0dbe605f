# Kernels whose proof needs an assumed size (`--assume`, specs/cli.md CLI-11).
from verifier.lang import *


@proc
def split_k_copy(K: size, n: size, x: f32[K, 256 * n] @ CudaGmemLinear,
                 y: f32[256 * n] @ CudaGmemLinear):
    # every k-task writes the same tile of y: a WAW between tasks k = 0 and k = 1 whenever
    # K >= 2, none with K == 1, for every n
    assert n > 0
    with CudaDeviceFunction(blockDim=256):
        for k in cuda_tasks(0, K):
            for blk in cuda_tasks(0, n):
                for t in cuda_threads(0, 256):
                    y[blk * 256 + t] = x[k, blk * 256 + t]
