# expect: s6a_wait_two refuted RAW s 25
# semantics.md S6a: S6 (examples/cp_async_double_buffer.py) with Await(cg[t], cuda_in_order, 2).
# At k = 0 the thread has arrived twice (a = 2), so a_max = 2 - 2 - 1 = -1: chunk 0 is not
# retired when thread 0 reads it -> RAW HAZARD @ s[0, 0, 0] (counterexample M = 128, K = 1).
from verifier.lang import *


@proc
def s6a_wait_two(M: size, K: size, g: f32[M, 4 * K] @ CudaGmemLinear, y: f32[M, K] @ CudaGmemLinear):
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
                    Await(cg[t], cuda_in_order, 2)
                    y[128 * task + t, k] = s[k % 2, t, 0]
            for t in cuda_threads(0, 128):
                Await(cg[t], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
