# attack: `--assume` makes a racy kernel vacuous (issue 19, CLI-11). With `--assume n=0` no
# task runs, so nothing is checked; that must say `vacuous` (exit 3), as `assert n == 0` does,
# never `proved`.
# expect: racy_assume refuted RAW tile 17 (vacuous with --assume n=0)
from verifier.lang import *


@proc
def racy_assume(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            tile: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                tile[t] = x[256 * blk + t]
            for t in cuda_threads(0, 256):
                y[256 * blk + t] = tile[255 - t] * 2.0
            Fence(cuda_in_order, cuda_in_order)
