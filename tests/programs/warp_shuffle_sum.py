# expect: warp_shuffle_sum proved
# Row sums of a 4-column matrix by teams of 4 lanes: lane 2i + j loads x[row, 2i + j] into its
# own register of v[i, j] (the [2, 2] tile is distributed over the team's lanes), then two xor
# shuffles add the pairs 2 lanes apart and 1 lane apart (callee-distributed windows, COLL-5.12;
# lowered as __shfl_xor_sync over just the pair, specs/codegen.md); lane 0 of each team stores.
from verifier.lang import *


@proc
def warp_shuffle_sum(M: size, x: f32[M, 4] @ CudaGmemLinear, y: f32[M] @ CudaGmemLinear):
    assert M % 8 == 0
    with CudaDeviceFunction(blockDim=32):
        for blk in cuda_tasks(0, M / 8):
            for r in cuda_threads(0, 8, unit=4 * cuda_thread):
                v: f32[2, 2] @ CudaRmem
                w: f32[2, 2] @ CudaRmem
                for i in cuda_threads(0, 2, unit=2 * cuda_thread):
                    for j in cuda_threads(0, 2, unit=cuda_thread):
                        v[i, j] = x[8 * blk + r, 2 * i + j]
                for j in cuda_threads(0, 2, unit=2 * cuda_threads_strided(1, 2)):
                    cuda_shfl_xor_sync_1f32_sum(w[:, j], v[:, j], laneMask=2)
                for i in cuda_threads(0, 2, unit=2 * cuda_thread):
                    cuda_shfl_xor_sync_1f32_sum(v[i, :], w[i, :], laneMask=1)
                    for j in cuda_threads(0, 2, unit=cuda_thread):
                        if i == 0:
                            if j == 0:
                                y[8 * blk + r] = v[i, j]
