# expect: tk_rotate_bug_nofinalfence refuted WAR smem 12
# The final fence removed: the free of smem (a write by every thread of the CTA) is not
# ordered after the warps' register loads from it.
from verifier.lang import *


@proc
def tk_rotate_bug_nofinalfence(M: size, x: f32[M, 32] @ CudaGmemLinear, y: f32[M, 32] @ CudaGmemLinear):
    assert M % 64 == 0
    with CudaDeviceFunction(blockDim=128):
        for m in cuda_tasks(0, M / 64):
            smem: f32[1, 64, 32] @ Sm90_SmemSwizzled(128)
            tile: f32[4, 16, 32] @ CudaTkWarpTile(16, 32)
            out: f32[4, 16, 32] @ CudaTkWarpTile(16, 32)
            for w in cuda_threads(0, 4, unit=cuda_warp):
                cuda_tk_load_sg(smem[0, 16 * w:16 * w + 16, :], x[64 * m + 16 * w:64 * m + 16 * w + 16, :], size0=16, size1=32, dst=f32, src=f32)
            Fence(cuda_in_order, cuda_in_order)
            for w in cuda_threads(0, 4, unit=cuda_warp):
                cuda_tk_load_rs_inner_cols_32(tile[w, :, :], smem[:, 16 * ((w + 1) % 4):16 * ((w + 1) % 4) + 16, :], rows=16, outer_cols=1, dst=f32, src=f32)
                cuda_tk_tile_relu(out[w, :, :], tile[w, :, :], rows=16, cols=32, dst=f32, src=f32)
                cuda_tk_store_rg(y[64 * m + 16 * w:64 * m + 16 * w + 16, :], out[w, :, :], size0=16, size1=32, dst=f32, src=f32)
