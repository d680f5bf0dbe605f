# expect: bw_gemm_multicast_bug_tx_bytes refuted transaction-count raw 31
# specs/blackwell.md BW-6 (SEM-8.6): A is f16 but is loaded by the _2f32 TMA, whose expect-tx
# counts 4 bytes per element: raw expects the A box and both halves of the multicast B box at 4
# bytes, but the A copy completes only 2 bytes per element, so the phase never completes.
from verifier.lang import *


@proc
def bw_gemm_multicast_bug_tx_bytes(T: size, KT: size, A: f16[256 * T, 8 * KT] @ CudaGmemLinear,
                      B: f32[64, 8 * KT] @ CudaGmemLinear, C: f32[256 * T, 64] @ CudaGmemLinear):
    assert KT > 0
    A_map = A[:, :] @ Sm90_tensorMap(32, 128, 8)
    B_map = B[:, :] @ Sm90_tensorMap(32, 32, 8)
    with CudaDeviceFunction(clusterDim=2, blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[2, 128, 8] @ Sm90_SmemSwizzled(32)
            B_s: f32[2, 64, 8] @ Sm90_SmemSwizzled(32)
            D: f32[2, 128, 64] @ Sm100_Tmem
            raw: barrier[2] @ CudaMbarrier
            war: barrier(raw)[2] @ CudaMbarrier
            done: barrier[2] @ CudaMbarrier
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(0, 1):
                    Sm100_tmem_alloc(D[cta, :, :], ncols=64)
                    Sm100_tmem_relinquish_alloc_permit()
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            for k in seq(0, KT):
                with CudaWarps(0, 1):
                    for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(war[cta], cuda_temporal, ~1)
                        Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[cta, :, :], A_map[256 * task + 128 * cta:256 * task + 128 * cta + 128, 8 * k:8 * k + 8], size0=128, size1=8) >> raw[cta]
                    Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(B_s[:, :, :], B_map[0:64, 8 * k:8 * k + 8], ncta=2, cta_stride=1, size0=64, size1=8) >> raw[:]
                    for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Arrive(cuda_temporal) >> raw[cta] >> raw[:]
                for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    with CudaWarps(4, 5):
                        for t in cuda_threads(0, 1, unit=cuda_thread):
                            Await(raw[cta], cuda_generic_and_async_proxy, ~0)
                            if k == 0:
                                Sm100_mma_tf32_zero_cta1(D[cta, :, :], A_s[cta, :, :], B_s[cta, :, :], M=128, N=64)
                            else:
                                Sm100_mma_tf32_cta1(D[cta, :, :], A_s[cta, :, :], B_s[cta, :, :], M=128, N=64)
                            Arrive(tcgen05_commit) >> war[cta] >> war[:]
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(4, 5):
                    for t in cuda_threads(0, 1, unit=cuda_thread):
                        Arrive(tcgen05_commit) >> done[cta]
                        Await(done[cta], tcgen05_after_thread_sync, ~0)
                Fence(cuda_in_order, tcgen05_after_thread_sync)
                with CudaWarps(4, 8):
                    Dr: f32[128, 64] @ Sm100_RmemMatrixD
                    Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[cta, :, :], N=64)
                    Fence(tcgen05_ld, cuda_in_order)
                    Sm100_store_d_row_major_f32(C[256 * task + 128 * cta:256 * task + 128 * cta + 128, :], Dr[:, :], N=64)
            Fence(cuda_in_order, cuda_in_order)
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(0, 1):
                    Sm100_tmem_dealloc(D[cta, :, :], ncols=64)
