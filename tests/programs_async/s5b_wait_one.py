# expect: s5b_wait_one refuted RAW s 19
# semantics.md S5b: Await(cg[t], cuda_in_order, 1) after a single Arrive: a_max = 1 - 1 - 1 = -1,
# nothing is retired -> RAW HAZARD @ s[0, 0]. (The free of cg would fail too, with
# Arrive count (1) != Await count (0), but the RAW comes first in the trace.)
from verifier.lang import *


@proc
def s5b_wait_one(M: size, g: f32[M, 4] @ CudaGmemLinear, y: f32[M] @ CudaGmemLinear):
    assert M % 128 == 0
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, M / 128):
            s: f32[128, 4] @ CudaSmemLinear
            cg: barrier[128] @ CudaCommitGroup
            for t in cuda_threads(0, 128):
                Sm80_cp_async_f32(s[t, 0:4], g[128 * task + t, 0:4], size=4)
                Arrive(Sm80_cp_async) >> cg[t]
                Await(cg[t], cuda_in_order, 1)
                y[128 * task + t] = s[t, 0] + s[t, 3]
            Fence(cuda_in_order, cuda_in_order)
