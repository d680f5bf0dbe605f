# expect: row_sum_seq proved
# Per-thread row sums with a scalar register accumulator and a seq loop; symbolic shape 256 * nb.
from verifier.lang import *


@proc
def row_sum_seq(nb: size, K: size, x: f32[256 * nb, K] @ CudaGmemLinear, y: f32[256 * nb] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            for t in cuda_threads(0, 256):
                acc: f32 @ CudaRmem
                acc = 0.0
                for j in seq(0, K):
                    acc += x[256 * blk + t, j]
                y[256 * blk + t] = acc
