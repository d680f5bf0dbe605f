# expect: s5a_no_commit refuted RAW s 16
# semantics.md S5a: S5 without the Arrive/Await pair (and without cg). The cp.async record is
# out-of-order ({t} x {Sm80} x {issue}): visible to nobody, not even its issuer, until a sync whose
# first sync-tl contains Sm80 witnesses it -> RAW HAZARD @ s[0, 0] (thread 0, task 0).
from verifier.lang import *


@proc
def s5a_no_commit(M: size, g: f32[M, 4] @ CudaGmemLinear, y: f32[M] @ CudaGmemLinear):
    assert M % 128 == 0
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, M / 128):
            s: f32[128, 4] @ CudaSmemLinear
            for t in cuda_threads(0, 128):
                Sm80_cp_async_f32(s[t, 0:4], g[128 * task + t, 0:4], size=4)
                y[128 * task + t] = s[t, 0] + s[t, 3]
            Fence(cuda_in_order, cuda_in_order)
