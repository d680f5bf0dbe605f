from __future__ import annotations

from exo import DRAM, proc


@proc
def reverse_blocks(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 256 == 0
    for b in seq(0, n / 256):
        for t in seq(0, 256):
            y[256 * b + t] = x[256 * b + 255 - t] * 2.0
