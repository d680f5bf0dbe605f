# A CPU-style loop turned into a CUDA kernel by upstream Exo-GPU's own rewrites
# (divide_loop, set_loop_mode, wrap_with_context). spork-verify does not reproduce these
# rewrites: run it with --exo-gpu-python PYTHON (specs/upstream_api.md SCHED-*), and the proc
# upstream prints is the one verified.
from __future__ import annotations

from exo import *
from exo.platforms.cuda import *
from exo.stdlib.scheduling import *


@proc
def scale(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 128 == 0
    for i in seq(0, n):
        y[i] = 2.0 * x[i]


def to_kernel(p):
    """One task per 128 elements, one thread per element."""
    p = divide_loop(p, p.find_loop("i"), 128, ("blk", "t"), perfect=True)
    p = set_loop_mode(p, p.find_loop("blk"), CudaTasks)
    p = set_loop_mode(p, p.find_loop("t"), CudaThreads(unit=cuda_thread))
    return wrap_with_context(p, p.find_loop("blk"), CudaDeviceFunction(blockDim=128))


scale = to_kernel(scale)  # the file's one proc: the kernel upstream's rewrites build
