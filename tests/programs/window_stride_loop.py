# expect: window_stride_loop unsupported ERR-V11
# A window parameter's stride as a loop bound: outside the asserts it is data-dependent control
# (LANG-2.7, LANG-2.8), unsupported at its line.
from verifier.lang import *


@proc
def window_stride_loop(N: size, x: [f32][N, 1], y: f32[8]):
    assert stride(x, 0) == N
    assert stride(x, 0) == 8
    for i in seq(0, stride(x, 0)):
        y[i] = x[i, 0]
