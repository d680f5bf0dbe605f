# expect: window_stride_assert_bug refuted out-of-bounds y 13
# window_stride_assert.py with `stride(x, 0) >= 8`: the asserts now admit every N >= 8 (some
# stride meets both), and y[8] is out of bounds at N = 9; the machine replays it at N = 9,
# skipping the asserts that read a stride (LANG-2.8).
from verifier.lang import *


@proc
def window_stride_assert_bug(N: size, x: [f32][N, 1], y: f32[8]):
    assert stride(x, 0) == N
    assert stride(x, 0) >= 8
    for i in seq(0, N):
        y[i] = x[i, 0]
