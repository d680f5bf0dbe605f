# expect: window_stride_assert proved
# The asserts read a window parameter's stride (LANG-2.8): the stride is an integer the proof
# quantifies with the sizes, so `stride(x, 0) == N` and `stride(x, 0) == 8` together admit
# only N = 8, and y[i] stays inside y for i < N.
from verifier.lang import *


@proc
def window_stride_assert(N: size, x: [f32][N, 1], y: f32[8]):
    assert stride(x, 0) == N
    assert stride(x, 0) == 8
    for i in seq(0, N):
        y[i] = x[i, 0]
