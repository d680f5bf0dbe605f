# expect: bw_gemm_cta2_bug_mixed_groups rejected ERR-A35
# specs/blackwell.md BW-5.4: the allocation is cta_group::1 and the MMA cta_group::2; a kernel's tcgen05
# instructions all take one .cta_group.
from verifier.lang import *


@proc
def bw_gemm_cta2_bug_mixed_groups(T: size, KT: size, A: f32[256 * T, 8 * KT] @ CudaGmemLinear,
                 B: f32[64, 8 * KT] @ CudaGmemLinear, C: f32[256 * T, 64] @ CudaGmemLinear):
    assert KT > 0
    A_map = A[:, :] @ Sm90_tensorMap(32, 128, 8)
    B_map = B[:, :] @ Sm90_tensorMap(32, 32, 8)
    with CudaDeviceFunction(clusterDim=2, blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[2, 128, 8] @ Sm90_SmemSwizzled(32)
            B_s: f32[2, 32, 8] @ Sm90_SmemSwizzled(32)
            D: f32[2, 128, 64] @ Sm100_Tmem
            raw: barrier[2] @ CudaMbarrier
            mma: barrier @ CudaMbarrier
            done: barrier[2] @ CudaMbarrier
            with CudaWarps(0, 1):
                Sm100_tmem_alloc(D[:, :, :], ncols=64)
                Sm100_tmem_relinquish_alloc_permit_cta2()
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            for k in seq(0, KT):
                for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    with CudaWarps(0, 1):
                        Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[cta, :, :], A_map[256 * task + 128 * cta:256 * task + 128 * cta + 128, 8 * k:8 * k + 8], size0=128, size1=8) >> raw[cta]
                        Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[cta, :, :], B_map[32 * cta:32 * cta + 32, 8 * k:8 * k + 8], size0=32, size1=8) >> raw[cta]
                        Arrive(cuda_temporal) >> raw[cta]
                        Await(raw[cta], cuda_generic_and_async_proxy, ~0)
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                for cta in cuda_threads(0, 1, unit=cuda_cta_in_cluster):
                    with CudaWarps(4, 5):
                        for t in cuda_threads(0, 1, unit=cuda_thread):
                            if k == 0:
                                Sm100_mma_tf32_zero_cta2(D[:, :, :], A_s[:, :, :], B_s[:, :, :], M=256, N=64)
                            else:
                                Sm100_mma_tf32_cta2(D[:, :, :], A_s[:, :, :], B_s[:, :, :], M=256, N=64)
                            Arrive(tcgen05_commit) >> mma
                            Await(mma, tcgen05_after_thread_sync, ~0)
                Fence(cuda_in_order, cuda_in_order)
            for cta in cuda_threads(0, 1, unit=cuda_cta_in_cluster):
                with CudaWarps(4, 5):
                    for t in cuda_threads(0, 1, unit=cuda_thread):
                        Arrive(tcgen05_commit) >> done[cta] >> done[:]
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(4, 8):
                    Await(done[cta], tcgen05_after_thread_sync, ~0)
                    Dr: f32[128, 64] @ Sm100_RmemMatrixD
                    Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[cta, :, :], N=64)
                    Fence(tcgen05_ld, cuda_in_order)
                    Sm100_store_d_row_major_f32(C[256 * task + 128 * cta:256 * task + 128 * cta + 128, :], Dr[:, :], N=64)
            Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(0, 1):
                Sm100_tmem_dealloc_cta2(D[:, :, :], ncols=64)
