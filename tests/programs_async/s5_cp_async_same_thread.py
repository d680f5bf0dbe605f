# expect: s5_cp_async_same_thread proved
# semantics.md S5: each thread cp.asyncs one row of 4 floats into SMEM, commits it
# (Arrive(Sm80_cp_async) >> cg[t]), waits for it (Await(cg[t], cuda_in_order, 0): a_max = 0
# retires arrive #0 and grants {t} x cuda_in_order) and reads its own row. The CTA fence orders the
# reads before the free of s; cg ends with a = w = 1.
from verifier.lang import *


@proc
def s5_cp_async_same_thread(M: size, g: f32[M, 4] @ CudaGmemLinear, y: f32[M] @ CudaGmemLinear):
    assert M % 128 == 0
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, M / 128):
            s: f32[128, 4] @ CudaSmemLinear
            cg: barrier[128] @ CudaCommitGroup
            for t in cuda_threads(0, 128):
                Sm80_cp_async_f32(s[t, 0:4], g[128 * task + t, 0:4], size=4)
                Arrive(Sm80_cp_async) >> cg[t]
                Await(cg[t], cuda_in_order, 0)
                y[128 * task + t] = s[t, 0] + s[t, 3]
            Fence(cuda_in_order, cuda_in_order)
