# expect: saxpy refuted out-of-bounds y 22
# Written as for upstream Exo-GPU: exo imports, a sibling config module, no verifier import.
from __future__ import annotations

from exo import *
from exo.platforms.cuda import *
from exo.platforms.Sm80 import *
from exo.stdlib.scheduling import *
import exo.platforms.Sm90

from saxpy_pre_config import threads_per_task


@proc
def saxpy(n: size, a: f32 @ CudaGridConstant, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                xv: f32 @ CudaRmem
                xv = x[256 * blk + t]
                y[256 * blk + t + 1] = a * xv + y[256 * blk + t]
