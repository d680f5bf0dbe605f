from __future__ import annotations

from exo import DRAM, proc


@proc
def reverse_rows(T: size, K: size, inp: f32[T, K, 32] @ DRAM, y: f32[T, K, 32] @ DRAM):
    for t in seq(0, T):
        for k in seq(0, K):
            for l in seq(0, 32):
                y[t, k, l] = inp[t, k, 31 - l]
