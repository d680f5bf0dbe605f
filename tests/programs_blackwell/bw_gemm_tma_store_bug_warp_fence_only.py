# expect: bw_gemm_tma_store_bug_warp_fence_only refuted RAW C_s 55
# specs/blackwell.md BW-6: the issuing warp fences the async proxy but the CTA does not sync first:
# the other epilogue warps' writes to the staging buffer are not ordered before warp 4's TMA store
# (fence.proxy.async without the barrier the issuing thread needs).
from verifier.lang import *


@proc
def bw_gemm_tma_store_bug_warp_fence_only(T: size, KT: size, A: f32[128 * T, 8 * KT] @ CudaGmemLinear,
                      B: f32[64, 8 * KT] @ CudaGmemLinear, C: f32[128 * T, 64] @ CudaGmemLinear):
    assert KT > 0
    A_map = A[:, :] @ Sm90_tensorMap(32, 128, 8)
    B_map = B[:, :] @ Sm90_tensorMap(32, 64, 8)
    C_map = C[:, :] @ Sm90_tensorMap(0, 128, 64)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[128, 8] @ Sm90_SmemSwizzled(32)
            B_s: f32[64, 8] @ Sm90_SmemSwizzled(32)
            C_s: f32[128, 64] @ CudaSmemLinear
            D: f32[128, 64] @ Sm100_Tmem
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            done: barrier @ CudaMbarrier
            with CudaWarps(0, 1):
                Sm100_tmem_alloc(D[:, :], ncols=64)
                Sm100_tmem_relinquish_alloc_permit()
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            for k in seq(0, KT):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~1)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[:, :], A_map[128 * task:128 * task + 128, 8 * k:8 * k + 8], size0=128, size1=8) >> raw
                    Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[:, :], B_map[0:64, 8 * k:8 * k + 8], size0=64, size1=8) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    for t in cuda_threads(0, 1, unit=cuda_thread):
                        Await(raw, cuda_generic_and_async_proxy, ~0)
                        if k == 0:
                            Sm100_mma_tf32_zero_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)
                        else:
                            Sm100_mma_tf32_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)
                        Arrive(tcgen05_commit) >> war
            with CudaWarps(4, 8):
                for t in cuda_threads(0, 1, unit=cuda_thread):
                    Arrive(tcgen05_commit) >> done
                    Await(done, tcgen05_after_thread_sync, ~0)
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            with CudaWarps(4, 8):
                for wg in cuda_threads(0, 1, unit=cuda_warpgroup):
                    Dr: f32[128, 64] @ Sm100_RmemMatrixD
                    Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[:, :], N=64)
                    Fence(tcgen05_ld, cuda_in_order)
                    Sm100_store_d_row_major_f32(C_s[:, :], Dr[:, :], N=64)
            with CudaWarps(4, 5):
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                Sm90_copy_tensor_to_gmem_linear_2f32(C_map[128 * task:128 * task + 128, 0:64], C_s[:, :], size0=128, size1=64)
                tcg: barrier @ CudaCommitGroup
                Arrive(tma_to_gmem_async) >> tcg
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(0, 1):
                Sm100_tmem_dealloc(D[:, :], ncols=64)
