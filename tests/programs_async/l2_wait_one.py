# expect: l2_wait_one refuted RAW stage 21
# language.md L2 with Await(cg[t], cuda_in_order, 1): after one Arrive, a_max = -1 and nothing is
# retired, so the CTA fence cannot carry the copies -> RAW HAZARD @ stage[0] (thread 0 reads it);
# counterexample n = 1. (The free of cg would also fail, a = 1 != w = 0, later in the trace.)
from verifier.lang import *


@proc
def l2_wait_one(n: size, src: f32[n, 128] @ CudaGmemLinear, dst: f32[n, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for row in cuda_tasks(0, n):
            stage: f32[128] @ CudaSmemLinear
            cg: barrier[32] @ CudaCommitGroup
            for t in cuda_threads(0, 32):
                Sm80_cp_async_f32(stage[4 * t : 4 * t + 4], src[row, 4 * t : 4 * t + 4], size=4)
                Arrive(Sm80_cp_async, 1) >> cg[t]
                Await(cg[t], cuda_in_order, 1)
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 32):
                for j in seq(0, 4):
                    dst[row, 32 * j + t] = stage[32 * j + t]
            Fence(cuda_in_order, cuda_in_order)
