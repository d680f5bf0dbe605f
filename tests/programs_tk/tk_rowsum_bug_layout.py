# expect: tk_rowsum_bug_layout rejected ERR-A07
# A row reduction writes the tile's column vector, CudaTkWarpVec(16, "ortho") for a row
# tile; a vector in the "align" layout is the wrong memory.
from verifier.lang import *


@proc
def tk_rowsum_bug_layout(M: size, alpha: f32 @ CudaGridConstant, x: f32[M, 64] @ CudaGmemLinear, s: f32[M] @ CudaGmemLinear):
    assert M % 64 == 0
    with CudaDeviceFunction(blockDim=128):
        for m in cuda_tasks(0, M / 64):
            sums: f32[64] @ CudaSmemLinear
            tile: f32[4, 16, 64] @ CudaTkWarpTile(16, 64)
            mx: f32[4, 16] @ CudaTkWarpVec(16, "align")
            acc: f32[4, 16] @ CudaTkWarpVec(16, "ortho")
            for w in cuda_threads(0, 4, unit=cuda_warp):
                cuda_tk_load_rg(tile[w, :, :], x[64 * m + 16 * w:64 * m + 16 * w + 16, :], size0=16, size1=64, dst=f32, src=f32)
                cuda_tk_make_causal_zero(16 * w, 0, tile[w, :, :], rows=16, cols=64, dst=f32)
                cuda_tk_tile_mul_lhs_scalar(tile[w, :, :], alpha, rows=16, cols=64, dst=f32, src=f32)
                cuda_tk_vec_neg_infty(mx[w, :], length=16, layout="ortho", dst=f32)
                cuda_tk_row_max(mx[w, :], tile[w, :, :], rows=16, cols=64, dst=f32, src=f32)
                cuda_tk_sub_row(tile[w, :, :], mx[w, :], rows=16, cols=64, dst=f32, src=f32)
                cuda_tk_vec_zero(acc[w, :], length=16, layout="ortho", dst=f32)
                cuda_tk_row_sum(acc[w, :], tile[w, :, :], rows=16, cols=64, dst=f32, src=f32)
                cuda_tk_vec_add_lhs(acc[w, :], mx[w, :], length=16, layout="ortho", dst=f32, src=f32)
                cuda_tk_store_vec_rs(sums[16 * w:16 * w + 16], acc[w, :], length=16, layout="ortho", dst=f32, src=f32)
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 64):
                s[64 * m + t] = sums[t]
            Fence(cuda_in_order, cuda_in_order)
