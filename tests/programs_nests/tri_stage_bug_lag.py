# expect: tri_stage refuted barrier-count cg 13
# tests/programs_nests/tri_stage.py with Await(..., 1): the newest group stays in flight, so the
# stage is read before its copy is retired (RAW, line 23) and at the free each cg[t] has
# n (n + 1) / 2 arrives but one await fewer retired (barrier-count, reported first: line 13).
from verifier.lang import *


@proc
def tri_stage(n: size, src: f32[n, n, 128] @ CudaGmemLinear, dst: f32[n, n, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            stage: f32[128] @ CudaSmemLinear
            cg: barrier[32] @ CudaCommitGroup
            for i in seq(0, n):
                for j in seq(0, i + 1):
                    for t in cuda_threads(0, 32):
                        Sm80_cp_async_f32(stage[4 * t:4 * t + 4], src[i, j, 4 * t:4 * t + 4], size=4)
                        Arrive(Sm80_cp_async, 1) >> cg[t]
                        Await(cg[t], cuda_in_order, 1)
                    Fence(cuda_in_order, cuda_in_order)
                    for t in cuda_threads(0, 32):
                        for q in seq(0, 4):
                            dst[i, j, 32 * q + t] = stage[32 * q + t]
                    Fence(cuda_in_order, cuda_in_order)
# test: slow (nonlinear counters: the refuted hazards take minutes)
