# expect: rmem_uniform_bug_scope rejected ERR-A18
# CudaRmemUniform(32) written by one thread of each warp: a uniform register is written at its
# group's scope (32 * cuda_thread, every thread storing the group's value), as upstream requires.
from verifier.lang import *

@proc
def rmem_uniform_bug_scope(dst: f32[256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 1):
            s: f32[8] @ CudaRmemUniform(32)
            for w in cuda_threads(0, 8, unit=32 * cuda_thread):
                for lane in cuda_threads(0, 1):
                    s[w] = 1.0
                for t in cuda_threads(0, 32):
                    dst[32 * w + t] = s[w]
