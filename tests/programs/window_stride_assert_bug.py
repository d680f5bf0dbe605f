# expect: window_stride_assert_bug refuted out-of-bounds y 15
# window_stride_assert.py with `stride(x, 0) >= 8`: the asserts now admit every N >= 8 (some
# stride meets both), and y[8] is out of bounds at N = 9; the machine replays it at N = 9,
# skipping the asserts that read a stride (LANG-2.8).
from verifier.lang import *


@proc
def window_stride_assert_bug(N: size, x: [f32][N, 1] @ CudaGmemLinear, y: f32[8] @ CudaGmemLinear):
    assert stride(x, 0) == N
    assert stride(x, 0) >= 8
    with CudaDeviceFunction(blockDim=32):
        for i in cuda_tasks(0, N):
            for t in cuda_threads(0, 1, unit=cuda_thread):
                y[i] = x[i, 0]
