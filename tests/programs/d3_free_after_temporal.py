# expect: d3_free_after_temporal proved
# semantics.md §10 D3: the SMEM free at the end of the task is ordered after the writes only by
# a temporal-only fence. A free is a write-only mutate (SEM-4.7): temporal visibility suffices,
# so it is proved; upstream's sync_check demands full visibility here and reports
# `WAW HAZARD @ free(s[63])` (camspork_jit, n = 2). `-v` notes the departure at the obligation.
from verifier.lang import *


@proc
def d3_free_after_temporal(n: size, x: f32[n, 64] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, n):
            s: f32[64] @ CudaSmemLinear
            for t in cuda_threads(0, 64):
                s[t] = x[task, t]
            Fence(cuda_in_order, cuda_temporal)
