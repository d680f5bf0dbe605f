# expect: l2_cg_no_thread_dim rejected ERR-A23
# language.md L2 with the commit group declared without the thread dimension
# (cg: barrier @ CudaCommitGroup, used as cg inside the t loop): every barrier index is
# distributed and must name the enclosing cuda_threads iterators (COLL-5.9), so the distributed
# memory deduction for cg fails with "Missing: t" (ERR-A23).
from verifier.lang import *


@proc
def l2_cg_no_thread_dim(n: size, src: f32[n, 128] @ CudaGmemLinear, dst: f32[n, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for row in cuda_tasks(0, n):
            stage: f32[128] @ CudaSmemLinear
            cg: barrier @ CudaCommitGroup
            for t in cuda_threads(0, 32):
                Sm80_cp_async_f32(stage[4 * t : 4 * t + 4], src[row, 4 * t : 4 * t + 4], size=4)
                Arrive(Sm80_cp_async, 1) >> cg
                Await(cg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 32):
                for j in seq(0, 4):
                    dst[row, 32 * j + t] = stage[32 * j + t]
            Fence(cuda_in_order, cuda_in_order)
