# expect: bw_gemm_tmem_a_bug_st_no_after_fence refuted WAW D 44
# specs/blackwell.md BW-3.3, BW-7.1: the CTA sync after tcgen05.st does not end in
# tcgen05.fence::after_thread_sync, so the MMA thread's tcgen05.mma is not ordered after it.
from verifier.lang import *


@proc
def bw_gemm_tmem_a_bug_st_no_after_fence(T: size, KT: size, A: f32[128 * T, 8 * KT] @ CudaGmemLinear,
                   B: f32[64, 8 * KT] @ CudaGmemLinear, C: f32[128 * T, 64] @ CudaGmemLinear):
    assert KT > 0
    A_map = A[:, :] @ Sm90_tensorMap(32, 128, 8)
    B_map = B[:, :] @ Sm90_tensorMap(32, 64, 8)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[128, 8] @ Sm90_SmemSwizzled(32)
            B_s: f32[64, 8] @ Sm90_SmemSwizzled(32)
            D: f32[128, 64] @ Sm100_Tmem
            A_t: f32[128, 32] @ Sm100_Tmem
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            done: barrier @ CudaMbarrier
            acc: barrier @ CudaMbarrier
            with CudaWarps(0, 1):
                Sm100_tmem_alloc(D[:, :], ncols=64)
                Sm100_tmem_alloc(A_t[:, :], ncols=32)
                Sm100_tmem_relinquish_alloc_permit()
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            with CudaWarps(4, 8):
                Z: f32[128, 64] @ Sm100_RmemMatrixD
                Sm100_zero_d_f32(Z[:, :], N=64)
                Sm100_tmem_st_32x32b_f32(D[:, :], Z[:, :], N=64)
                Fence(tcgen05_st, cuda_in_order)
            Fence(tcgen05_before_thread_sync, cuda_in_order)
            for k in seq(0, KT):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~1)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[:, :], A_map[128 * task:128 * task + 128, 8 * k:8 * k + 8], size0=128, size1=8) >> raw
                    Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[:, :], B_map[0:64, 8 * k:8 * k + 8], size0=64, size1=8) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    for t in cuda_threads(0, 1, unit=cuda_thread):
                        Await(raw, cuda_generic_and_async_proxy, ~0)
                        Sm100_tmem_cp_128x256b_f32(A_t[:, 0:8], A_s[:, :])
                        Sm100_mma_tf32_ts_cta1(D[:, :], A_t[:, 0:8], B_s[:, :], M=128, N=64)
                        Arrive(tcgen05_commit) >> war
                        Arrive(tcgen05_commit) >> acc
                        Await(acc, tcgen05_after_thread_sync, ~0)
            with CudaWarps(4, 8):
                for t in cuda_threads(0, 1, unit=cuda_thread):
                    Arrive(tcgen05_commit) >> done
                    Await(done, tcgen05_after_thread_sync, ~0)
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            with CudaWarps(4, 8):
                Dr: f32[128, 64] @ Sm100_RmemMatrixD
                Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[:, :], N=64)
                Fence(tcgen05_ld, cuda_in_order)
                Sm100_store_d_row_major_f32(C[128 * task:128 * task + 128, :], Dr[:, :], N=64)
            Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(0, 1):
                Sm100_tmem_dealloc(A_t[:, :], ncols=32)
                Sm100_tmem_dealloc(D[:, :], ncols=64)
