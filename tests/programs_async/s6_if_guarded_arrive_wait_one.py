# expect: s6_if refuted RAW s 25
# s6_if with wait_group 1 (S6's own N): correct in S6 because its unconditional Arrive commits
# an empty group in the last iteration; here the last iteration commits nothing, so at k = K - 1
# a_max = K - 2 and tile K - 1 (slot (K - 1) % 2) is read unretired -> RAW HAZARD @ s.
from verifier.lang import *



@proc
def s6_if(M: size, K: size, g: f32[M, 4 * K + 4] @ CudaGmemLinear, y: f32[M, K] @ CudaGmemLinear):
    assert M % 128 == 0
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, M / 128):
            s: f32[2, 128, 4] @ CudaSmemLinear
            cg: barrier[128] @ CudaCommitGroup
            for t in cuda_threads(0, 128):
                Sm80_cp_async_f32(s[0, t, 0:4], g[128 * task + t, 0:4], size=4)
                Arrive(Sm80_cp_async, 1) >> cg[t]
            for k in seq(0, K):
                for t in cuda_threads(0, 128):
                    if k + 1 < K:
                        Sm80_cp_async_f32(s[(k + 1) % 2, t, 0:4], g[128 * task + t, 4 * k + 4 : 4 * k + 8], size=4)
                        Arrive(Sm80_cp_async, 1) >> cg[t]
                    Await(cg[t], cuda_in_order, 1)
                    y[128 * task + t, k] = s[k % 2, t, 0]
            for t in cuda_threads(0, 128):
                Await(cg[t], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
