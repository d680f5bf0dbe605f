# expect: bw_gemm_f8_bug_no_step_sync refuted RAW D 39
# specs/blackwell.md BW-2.2, BW-3.3: bw_gemm_f8 without the CTA sync at the end of each K step.
# Only the MMA thread waits for the commit; thread r of the warpgroup reads TMEM lane r by
# tcgen05.ld with no synchronization after the MMA (RAW on D), and the next K step's stores
# overwrite A_s and B_s while the MMA may read them (WAR).
from verifier.lang import *


@proc
def bw_gemm_f8_bug_no_step_sync(T: size, KT: size, A: e4m3[128 * T, 32 * KT] @ CudaGmemLinear,
                                 B: e4m3[64, 32 * KT] @ CudaGmemLinear, C: f32[128 * T, 64] @ CudaGmemLinear):
    assert KT > 0
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            A_s: e4m3[128, 32] @ CudaSmemLinear
            B_s: e4m3[64, 32] @ CudaSmemLinear
            D: f32[128, 64] @ Sm100_Tmem
            mma: barrier @ CudaMbarrier
            with CudaWarps(0, 1):
                Sm100_tmem_alloc(D[:, :], ncols=64)
                Sm100_tmem_relinquish_alloc_permit()
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            for k in seq(0, KT):
                for r in cuda_threads(0, 128):
                    for j in seq(0, 32):
                        A_s[r, j] = A[128 * task + r, 32 * k + j]
                for r in cuda_threads(0, 64):
                    for j in seq(0, 32):
                        B_s[r, j] = B[r, 32 * k + j]
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                for t in cuda_threads(0, 1, unit=cuda_thread):
                    if k == 0:
                        Sm100_mma_f8f6f4_zero_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)
                    else:
                        Sm100_mma_f8f6f4_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)
                    Arrive(tcgen05_commit) >> mma
                    Await(mma, tcgen05_after_thread_sync, ~0)
            Dr: f32[128, 64] @ Sm100_RmemMatrixD
            Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[:, :], N=64)
            Fence(tcgen05_ld, cuda_in_order)
            Sm100_store_d_row_major_f32(C[128 * task:128 * task + 128, :], Dr[:, :], N=64)
            Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(0, 1):
                Sm100_tmem_dealloc(D[:, :], ncols=64)
