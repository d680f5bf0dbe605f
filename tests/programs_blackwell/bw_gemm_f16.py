# expect: bw_gemm_f16 proved
# specs/blackwell.md BW-2.1 (kind::f16): the CTA's threads copy f16 tiles of A (128 x 16) and
# B (64 x 16) into SMEM with ordinary stores; a CTA sync whose second sync-tl reaches the async
# proxy (fence.proxy.async) hands them to the tcgen05.mma of one thread, which commits the K step
# to `mma` and waits; a CTA sync with tcgen05.fence::after_thread_sync releases the tiles for the
# next K step and, after the loop, lets the warpgroup read D by tcgen05.ld.
from verifier.lang import *


@proc
def bw_gemm_f16(T: size, KT: size, A: f16[128 * T, 16 * KT] @ CudaGmemLinear,
                B: f16[64, 16 * KT] @ CudaGmemLinear, C: f32[128 * T, 64] @ CudaGmemLinear):
    assert KT > 0
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            A_s: f16[128, 16] @ CudaSmemLinear
            B_s: f16[64, 16] @ CudaSmemLinear
            D: f32[128, 64] @ Sm100_Tmem
            mma: barrier @ CudaMbarrier
            with CudaWarps(0, 1):
                Sm100_tmem_alloc(D[:, :], ncols=64)
                Sm100_tmem_relinquish_alloc_permit()
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            for k in seq(0, KT):
                for r in cuda_threads(0, 128):
                    for j in seq(0, 16):
                        A_s[r, j] = A[128 * task + r, 16 * k + j]
                for r in cuda_threads(0, 64):
                    for j in seq(0, 16):
                        B_s[r, j] = B[r, 16 * k + j]
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                for t in cuda_threads(0, 1, unit=cuda_thread):
                    if k == 0:
                        Sm100_mma_f16_zero_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)
                    else:
                        Sm100_mma_f16_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)
                    Arrive(tcgen05_commit) >> mma
                    Await(mma, tcgen05_after_thread_sync, ~0)
                Fence(cuda_in_order, tcgen05_after_thread_sync)
            Dr: f32[128, 64] @ Sm100_RmemMatrixD
            Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[:, :], N=64)
            Fence(tcgen05_ld, cuda_in_order)
            Sm100_store_d_row_major_f32(C[128 * task:128 * task + 128, :], Dr[:, :], N=64)
            Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(0, 1):
                Sm100_tmem_dealloc(D[:, :], ncols=64)
