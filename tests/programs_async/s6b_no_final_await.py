# expect: s6b_no_final_await refuted barrier-count cg 16
# semantics.md S6b: S6 without the final Await(cg[t], cuda_in_order, 0). The data accesses are
# all fine (chunk K - 1 is retired in iteration K - 1), but at the end of the task every cg[t]
# has a = K + 1 arrives and w = K: freeing cg fails with Arrive count (K+1) != Await count (K)
# (ERR-V05). Frees run in reverse allocation order, so cg is checked before s (which would pass).
from verifier.lang import *


@proc
def s6b_no_final_await(M: size, K: size, g: f32[M, 4 * K] @ CudaGmemLinear, y: f32[M, K] @ CudaGmemLinear):
    assert M % 128 == 0
    assert K >= 1
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, M / 128):
            s: f32[2, 128, 4] @ CudaSmemLinear
            cg: barrier[128] @ CudaCommitGroup
            for t in cuda_threads(0, 128):
                Sm80_cp_async_f32(s[0, t, 0:4], g[128 * task + t, 0:4], size=4)
                Arrive(Sm80_cp_async) >> cg[t]
            for k in seq(0, K):
                for t in cuda_threads(0, 128):
                    if k + 1 < K:
                        Sm80_cp_async_f32(s[(k + 1) % 2, t, 0:4], g[128 * task + t, 4 * k + 4 : 4 * k + 8], size=4)
                    Arrive(Sm80_cp_async) >> cg[t]
                    Await(cg[t], cuda_in_order, 1)
                    y[128 * task + t, k] = s[k % 2, t, 0]
            Fence(cuda_in_order, cuda_in_order)
