# expect: l2_negative_n rejected ERR-A29
# language.md L2 with an await-indexed N on the commit group, Await(cg[t], cuda_in_order, ~0):
# CudaCommitGroup requires N >= 0 (LANG-5.9, ERR-A29).
from verifier.lang import *


@proc
def l2_negative_n(n: size, src: f32[n, 128] @ CudaGmemLinear, dst: f32[n, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for row in cuda_tasks(0, n):
            stage: f32[128] @ CudaSmemLinear
            cg: barrier[32] @ CudaCommitGroup
            for t in cuda_threads(0, 32):
                Sm80_cp_async_f32(stage[4 * t : 4 * t + 4], src[row, 4 * t : 4 * t + 4], size=4)
                Arrive(Sm80_cp_async, 1) >> cg[t]
                Await(cg[t], cuda_in_order, ~0)
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 32):
                for j in seq(0, 4):
                    dst[row, 32 * j + t] = stage[32 * j + t]
            Fence(cuda_in_order, cuda_in_order)
