# expect: saxpy_bug_oob refuted out-of-bounds x 13
# saxpy with a rounded-up task count (n + 255) / 256, no assertion and no `if` guard:
# for n = 1 the thread t = 1 of task 0 reads x[1].
from verifier.lang import *


@proc
def saxpy_bug_oob(n: size, a: f32 @ CudaGridConstant, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, (n + 255) / 256):
            for t in cuda_threads(0, 256):
                xv: f32 @ CudaRmem
                xv = x[256 * blk + t]
                y[256 * blk + t] = a * xv + y[256 * blk + t]
