# expect: s14m_multicast_tma_cluster proved
# A 2x2 cluster fed by multicast TMA, the pattern of sporkbench's m2n2 Sm90a GEMMs: each CTA
# row's producers multicast an A tile to the row, each column's a B tile to the column, with
# trailing barriers raw[m, :] and raw[:, n]; each CTA's consumers await their own raw[m, n],
# run wgmma and store; a cluster-wide Fence precedes the frees. The free of A_s (B_s, raw)
# sees the TMA's write through a consumer thread of the receiving row, which neither the
# producer nor the freeing thread need be (specs/verification.md, Choice E4).
from verifier.lang import *


@proc
def s14m_multicast_tma_cluster(T: size, A: f32[T, 256, 32] @ CudaGmemLinear,
                               B: f32[T, 128, 32] @ CudaGmemLinear,
                               C: f32[T, 2, 2, 128, 64] @ CudaGmemLinear):
    A_map = A[:, :, :] @ Sm90_tensorMap(128, 1, 64, 32)
    B_map = B[:, :, :] @ Sm90_tensorMap(128, 1, 32, 32)
    with CudaDeviceFunction(clusterDim=4, warp_config=[CudaWarpConfig("producer", 1, setmaxnreg_dec=40), CudaWarpConfig("unused", 3, setmaxnreg_dec=40), CudaWarpConfig("consumer", 8, setmaxnreg_inc=232)]):
        for task in cuda_tasks(0, T):
            D: f32[2, 2, 2, 64, 64] @ Sm90_RmemMatrixD(64, 64)
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    with CudaWarps(name="consumer"):
                        for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                            Sm90_zero_scale_d_f32(D[m, n, wg, :, :], M=64, N=64)
            raw: barrier[2, 2] @ CudaMbarrier
            war: barrier(raw)[2, 2] @ CudaMbarrier
            cg: barrier[2, 2, 2] @ CudaCommitGroup
            A_s: f32[2, 2, 128, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[2, 2, 64, 32] @ Sm90_SmemSwizzled(128)
            with CudaWarps(name="producer"):
                for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                    for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(war[m, n], cuda_temporal, ~1)
                    Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(A_s[m, :, :, :], A_map[task, 128 * m:128 * m + 128, 0:32], ncta=2, cta_stride=1, size0=128, size1=32, smem_box=(1, 64, 32)) >> raw[m, :]
                for n in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster_strided(2)):
                    Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(B_s[:, n, :, :], B_map[task, 64 * n:64 * n + 64, 0:32], ncta=2, cta_stride=2, size0=64, size1=32, smem_box=(1, 32, 32)) >> raw[:, n]
                    for m in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Arrive(cuda_temporal) >> raw[m, :] >> raw[:, n]
            with CudaWarps(name="consumer"):
                for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                    for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(raw[m, n], cuda_generic_and_async_proxy, ~0)
                        for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                            Fence(wgmma_fence_1, wgmma_fence_2)
                            for kk in seq(0, 4):
                                Sm90_mma_async_tf32(D[m, n, wg, :, :], A_s[m, n, 64 * wg:64 * wg + 64, 8 * kk:8 * kk + 8], B_s[m, n, :, 8 * kk:8 * kk + 8], M=64, N=64)
                            Arrive(wgmma_async) >> cg[m, n, wg]
                            Await(cg[m, n, wg], cuda_in_order, 0)
                            Sm90_mma_store_d_row_major_tf32(64, 64, C[task, m, n, 64 * wg:64 * wg + 64, :], D[m, n, wg, :, :], M=64, N=64)
                        Arrive(cuda_in_order) >> war[m, :] >> war[:, n]
            Fence(cuda_in_order, cuda_in_order)
