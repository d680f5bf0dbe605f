"""Blackwell kernels the codegen tests hand-certify (a Certificate with the proc's own IR hash):
a cta_group::1 tcgen05.commit multicast to both CTAs of a cluster, which codegen lowers
(BW-CG-4) before the verifier proves it (it reports the commit inside the `c` and `t` thread
loops unsupported, ERR-V11). The kernel
follows bw_gemm's synchronization, with B multicast by TMA to the CTA pair and each stage
released to both producers by the consumer's commit. Load with `load_procs`, not `import`."""

from verifier.lang import *


@proc
def bw_gemm_multicast(M: size, K: size, A: f32[M, K] @ CudaGmemLinear,
                      B: f32[64, K] @ CudaGmemLinear, C: f32[M, 64] @ CudaGmemLinear):
    assert M % 256 == 0
    assert K % 32 == 0
    A_map = A[:, :] @ Sm90_tensorMap(128, 128, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 32, 32)
    with CudaDeviceFunction(clusterDim=2, blockDim=256):
        for tm in cuda_tasks(0, M / 256):
            A_s: f32[2, 2, 128, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[2, 2, 64, 32] @ Sm90_SmemSwizzled(128)
            D: f32[2, 128, 64] @ Sm100_Tmem
            raw: barrier[2] @ CudaMbarrier
            war: barrier(raw)[2] @ CudaMbarrier
            done: barrier[2] @ CudaMbarrier
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(0, 1):
                    Sm100_tmem_alloc(D[c, :, :], ncols=64)
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            for k in seq(0, K / 32):
                with CudaWarps(0, 1):
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(war[c], cuda_temporal, ~1)
                        Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[c, k % 2, :, :], A_map[256 * tm + 128 * c:256 * tm + 128 * c + 128, 32 * k:32 * k + 32], size0=128, size1=32) >> raw[c]
                    Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(B_s[:, k % 2, :, :], B_map[0:64, 32 * k:32 * k + 32], ncta=2, cta_stride=1, size0=64, size1=32) >> raw[:]
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Arrive(cuda_temporal) >> raw[c] >> raw[:]
                with CudaWarps(4, 8):
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        for t in cuda_threads(0, 1, unit=cuda_thread):
                            Await(raw[c], cuda_generic_and_async_proxy, ~0)
                            for kk in seq(0, 4):
                                Sm100_mma_tf32_cta1(D[c, :, :], A_s[c, k % 2, :, 8 * kk:8 * kk + 8], B_s[c, k % 2, :, 8 * kk:8 * kk + 8], M=128, N=64)
                            Arrive(tcgen05_commit) >> war[c] >> war[:]
            with CudaWarps(4, 8):
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 1, unit=cuda_thread):
                        Arrive(tcgen05_commit) >> done[c]
                        Await(done[c], tcgen05_after_thread_sync, ~0)
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            with CudaWarps(4, 8):
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for wg in cuda_threads(0, 1, unit=cuda_warpgroup):
                        Dr: f32[128, 64] @ Sm100_RmemMatrixD
                        Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[c, :, :], N=64)
                        Fence(tcgen05_ld, cuda_in_order)
                        Sm100_store_d_row_major_f32(C[256 * tm + 128 * c:256 * tm + 128 * c + 128, :], Dr[:, :], N=64)
            Fence(cuda_in_order, cuda_in_order)
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(0, 1):
                    Sm100_tmem_dealloc(D[c, :, :], ncols=64)
