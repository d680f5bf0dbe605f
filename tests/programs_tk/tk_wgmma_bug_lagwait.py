# expect: tk_wgmma_bug_lagwait refuted RAW D 29
# TK-5: the wait lets one commit group stay in flight: each warp's store reads its tile of D
# while the wgmma that accumulates into it may still run.
from verifier.lang import *


@proc
def tk_wgmma_bug_lagwait(T: size, A: bf16[T, 64, 64] @ CudaGmemLinear, B: bf16[256, 64] @ CudaGmemLinear,
             C: f32[T, 64, 256] @ CudaGmemLinear, C2: f32[T, 64, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            A_s: bf16[64, 64] @ Sm90_SmemSwizzled(128)
            B_s: bf16[256, 64] @ Sm90_SmemSwizzled(128)
            D: f32[4, 16, 256] @ Sm90_TkRmemTileD(256)
            cg: barrier @ Sm90_WgmmaCommitGroup
            for w in cuda_threads(0, 4, unit=cuda_warp):
                cuda_tk_load_sg(A_s[16 * w:16 * w + 16, :], A[task, 16 * w:16 * w + 16, :],
                                size0=16, size1=64, dst=bf16, src=bf16)
                cuda_tk_load_sg(B_s[64 * w:64 * w + 64, :], B[64 * w:64 * w + 64, :],
                                size0=64, size1=64, dst=bf16, src=bf16)
            Fence(cuda_in_order, cuda_generic_and_async_proxy)
            Sm90_tk_zero_scale_d(D[:, :, :], D=f32, N=256)
            Fence(wgmma_fence_1, wgmma_fence_2)
            Sm90_tk_mma_row_col(D[:, :, :], A_s[:, :], B_s[:, :], D=f32, A=bf16, B=bf16,
                                N=256, K=64)
            Arrive(wgmma_async) >> cg
            Await(cg, cuda_in_order, 1)
            for w in cuda_threads(0, 4, unit=cuda_warp):
                cuda_tk_store_rg(C[task, 16 * w:16 * w + 16, :], D[w, :, :], size0=16,
                                 size1=256, dst=f32, src=f32)
            Fence(wgmma_fence_1, wgmma_fence_2)
            Sm90_tk_zero_scale_d(D[:, :, :], D=f32, N=256)
            Sm90_tk_mma_row_col(D[:, :, :], A_s[:, :], B_s[:, :], D=f32, A=bf16, B=bf16,
                                N=256, K=64)
            Arrive(wgmma_async) >> cg
            Await(cg, cuda_in_order, 0)
            for w in cuda_threads(0, 4, unit=cuda_warp):
                cuda_tk_store_rg(C2[task, 16 * w:16 * w + 16, :], D[w, :, :], size0=16,
                                 size1=256, dst=f32, src=f32)
