# expect: s6_if proved
# Semantics.md S6 with the Arrive moved under the `if k + 1 < K` guard: commit group #j still
# holds tile j (the prologue commits tile 0, iteration k commits tile k + 1 while k + 1 < K), but
# the last iteration commits nothing. With wait_group 0 every committed tile is retired before it
# is read. The counters narrow the k loop by the guard (specs/verification.md, SEM-6.4).
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
                    Await(cg[t], cuda_in_order, 0)
                    y[128 * task + t, k] = s[k % 2, t, 0]
            for t in cuda_threads(0, 128):
                Await(cg[t], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
