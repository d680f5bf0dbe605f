# expect: rmem_not_distributed rejected ERR-A23
# A per-thread register tile allocated at CTA scope but indexed by a seq iterator instead of the
# thread iterator: distributed memory deduction cannot assign shards to threads (COLL-5.6).
from verifier.lang import *


@proc
def rmem_not_distributed(n: size, y: f32[n, 64] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, n):
            acc: f32[64] @ CudaRmem
            for t in cuda_threads(0, 64):
                for j in seq(0, 64):
                    acc[j] = 0.0
                y[task, t] = acc[t]
