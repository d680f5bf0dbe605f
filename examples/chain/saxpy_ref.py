from __future__ import annotations

from exo import DRAM, proc


@proc
def saxpy(n: size, a: f32, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        y[i] = a * x[i] + y[i]
