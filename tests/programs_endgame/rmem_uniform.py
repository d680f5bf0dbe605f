# expect: rmem_uniform proved
# Endgame's CudaRmemUniform(32): one register value per warp, written by the whole warp (its
# shards belong to 32-thread units) and read by each of its threads.
from verifier.lang import *

@proc
def rmem_uniform(dst: f32[256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 1):
            s: f32[8] @ CudaRmemUniform(32)
            for w in cuda_threads(0, 8, unit=32 * cuda_thread):
                s[w] = 1.0
                for t in cuda_threads(0, 32):
                    dst[32 * w + t] = s[w]
