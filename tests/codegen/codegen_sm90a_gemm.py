"""Warp-specialised Hopper GEMMs in the shape of sporkbench's Sm90a kernels, for the codegen tests.

C[l, n, m] = sum_k A[l, m, ks, k] * B[l, n, ks, k] on a cluster of rows x cols CTAs: one producer
warp per CTA multicasts its share of the A tile along its cluster row and of the B tile along
its cluster column into a ring of 128-byte-swizzled slots (4-dimensional tensor maps with
extent-1 box dimensions), completing on `raw` with transaction bytes; two consumer warpgroups
run wgmma from each slot and release it through `war` to every CTA that wrote into it; the
epilogue stores the register accumulators to GMEM (`rmem`) or stages them in SMEM and writes
them by TMA store (`tma`) or TMA reduction (`reduce`, split-K). The lowering tests certify them
by hand; test_codegen_early_release.py proves the 128 x 256 split-K ones (with and without the
fence before the staging tile). Load with `load_procs`, not `import`.
"""

from verifier.lang import *

SLOTS = 4  # ring depth of the A / B tiles
KT = 32  # K extent of one tile (one 128-byte swizzled row of f32)


def ws_gemm(name, tile_m, tile_n, rows, cols, epilogue, staging_fence=True):
    half_m = tile_m // 2  # rows of one consumer warpgroup
    box_a = (1, tile_m // cols, 1, KT)  # each CTA of a row multicasts 1/cols of the A tile
    box_b = (1, tile_n // rows, 1, KT)
    box_c = (1, tile_n, tile_m)
    span_m = tile_m * rows
    span_n = tile_n * cols
    split = epilogue == "reduce"
    warps = [CudaWarpConfig("producer", 1, setmaxnreg_dec=40),
             CudaWarpConfig("idle", 3, setmaxnreg_dec=40),
             CudaWarpConfig("consumer", 8, setmaxnreg_inc=232)]

    @proc
    def gemm(L: size, M: size, N: size, KS: size, KC: size, A: f32[L, M, KS, KC] @ CudaGmemLinear, B: f32[L, N, KS, KC] @ CudaGmemLinear, C: f32[L, N, M] @ CudaGmemLinear):
        assert L > 0
        assert M > 0
        assert N > 0
        assert KC > 0
        assert KC % 4 == 0
        a_map = A[:, :, :, :] @ Sm90_tensorMap(128, *box_a)
        b_map = B[:, :, :, :] @ Sm90_tensorMap(128, *box_b)
        c_map = C[:, :, :] @ Sm90_tensorMap(0, *box_c)  # used by the TMA epilogues only
        if split:
            cudaMemsetAsync0_3f32(L, N, M, C[:, :, :])
        with CudaDeviceFunction(clusterDim=rows * cols, warp_config=warps, blocks_per_sm=1):
            for l in cuda_tasks(0, L):
                for ks in cuda_tasks(0, KS):
                    for tn in cuda_tasks(0, (N + span_n - 1) / span_n):
                        for tm in cuda_tasks(0, (M + span_m - 1) / span_m):
                            acc: f32[rows, cols, 2, half_m, tile_n] @ Sm90_RmemMatrixD(half_m, tile_n)
                            for r in cuda_threads(0, rows, unit=cols * cuda_cta_in_cluster):
                                for c in cuda_threads(0, cols, unit=cuda_cta_in_cluster):
                                    with CudaWarps(name="consumer"):
                                        for g in cuda_threads(0, 2, unit=cuda_warpgroup):
                                            Sm90_zero_scale_d_f32(acc[r, c, g, :, :], M=half_m, N=tile_n)
                            full: barrier[rows, cols] @ CudaMbarrier
                            empty: barrier(full)[rows, cols] @ CudaMbarrier
                            mma: barrier[rows, cols, 2] @ CudaCommitGroup
                            a_s: f32[rows, cols, SLOTS, tile_m, KT] @ Sm90_SmemSwizzled(128)
                            b_s: f32[rows, cols, SLOTS, tile_n, KT] @ Sm90_SmemSwizzled(128)
                            for k in seq(0, (KC + KT - 1) / KT):
                                with CudaWarps(name="producer"):
                                    for r in cuda_threads(0, rows, unit=cols * cuda_cta_in_cluster):
                                        for c in cuda_threads(0, cols, unit=cuda_cta_in_cluster):
                                            Await(empty[r, c], cuda_temporal, ~(SLOTS - 1))
                                        Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(a_s[r, :, k % SLOTS, :, :], a_map[l, (rows * tm + r) * tile_m:(rows * tm + r + 1) * tile_m, ks, k * KT:k * KT + KT], ncta=cols, cta_stride=1, size0=tile_m, size1=KT, smem_box=box_a) >> full[r, :]
                                    for c in cuda_threads(0, cols, unit=rows * cuda_cta_in_cluster_strided(cols)):
                                        Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(b_s[:, c, k % SLOTS, :, :], b_map[l, (cols * tn + c) * tile_n:(cols * tn + c + 1) * tile_n, ks, k * KT:k * KT + KT], ncta=rows, cta_stride=cols, size0=tile_n, size1=KT, smem_box=box_b) >> full[:, c]
                                        for r in cuda_threads(0, rows, unit=cuda_cta_in_cluster):
                                            Arrive(cuda_temporal) >> full[r, :] >> full[:, c]
                                with CudaWarps(name="consumer"):
                                    for r in cuda_threads(0, rows, unit=cols * cuda_cta_in_cluster):
                                        for c in cuda_threads(0, cols, unit=cuda_cta_in_cluster):
                                            Await(full[r, c], cuda_generic_and_async_proxy, ~0)
                                            for g in cuda_threads(0, 2, unit=cuda_warpgroup):
                                                Fence(wgmma_fence_1, wgmma_fence_2)
                                                for kk in seq(0, KT / 8):
                                                    Sm90_mma_async_tf32(acc[r, c, g, :, :], a_s[r, c, k % SLOTS, g * half_m:(g + 1) * half_m, 8 * kk:8 * kk + 8], b_s[r, c, k % SLOTS, :, 8 * kk:8 * kk + 8], M=half_m, N=tile_n)
                                                Arrive(wgmma_async) >> mma[r, c, g]
                                                if k >= 1:
                                                    Await(mma[r, c, g], cuda_in_order, 1)
                                            Arrive(cuda_in_order) >> empty[r, :] >> empty[:, c]
                            for r in cuda_threads(0, rows, unit=cols * cuda_cta_in_cluster):
                                for c in cuda_threads(0, cols, unit=cuda_cta_in_cluster):
                                    with CudaWarps(name="consumer"):
                                        for g in cuda_threads(0, 2, unit=cuda_warpgroup):
                                            Await(mma[r, c, g], cuda_in_order, 0)
                            if epilogue == "rmem":
                                done: barrier @ CudaClusterSync
                                Arrive(cuda_in_order) >> done
                                for r in cuda_threads(0, rows, unit=cols * cuda_cta_in_cluster):
                                    for c in cuda_threads(0, cols, unit=cuda_cta_in_cluster):
                                        with CudaWarps(name="consumer"):
                                            for g in cuda_threads(0, 2, unit=cuda_warpgroup):
                                                Sm90_mma_store_d_col_major_tf32(M - ((rows * tm + r) * tile_m + g * half_m), N - (cols * tn + c) * tile_n, C[l, (cols * tn + c) * tile_n:(cols * tn + c + 1) * tile_n, (rows * tm + r) * tile_m + g * half_m:(rows * tm + r) * tile_m + (g + 1) * half_m], acc[r, c, g, :, :], M=half_m, N=tile_n)
                                Await(done, cuda_in_order, 0)
                            else:
                                if staging_fence:  # orders the ring's last uses before c_s
                                    Fence(cuda_in_order, cuda_in_order)
                                c_s: f32[rows, cols, tile_n, tile_m] @ CudaSmemLinear
                                for r in cuda_threads(0, rows, unit=cols * cuda_cta_in_cluster):
                                    for c in cuda_threads(0, cols, unit=cuda_cta_in_cluster):
                                        with CudaWarps(name="consumer"):
                                            for g in cuda_threads(0, 2, unit=cuda_warpgroup):
                                                Sm90_mma_store_d_col_major_tf32(half_m, tile_n, c_s[r, c, :, g * half_m:(g + 1) * half_m], acc[r, c, g, :, :], M=half_m, N=tile_n)
                                        Fence(cuda_in_order, cuda_generic_and_async_proxy)
                                        with CudaWarps(name="producer"):
                                            if split:
                                                Sm90_reduce_tensor_to_gmem_linear_2f32(c_map[l, (cols * tn + c) * tile_n:(cols * tn + c + 1) * tile_n, (rows * tm + r) * tile_m:(rows * tm + r + 1) * tile_m], c_s[r, c, :, :], size0=tile_n, size1=tile_m, smem_box=box_c)
                                            else:
                                                Sm90_copy_tensor_to_gmem_linear_2f32(c_map[l, (cols * tn + c) * tile_n:(cols * tn + c + 1) * tile_n, (rows * tm + r) * tile_m:(rows * tm + r + 1) * tile_m], c_s[r, c, :, :], size0=tile_n, size1=tile_m, smem_box=box_c)
                                            stores: barrier @ CudaCommitGroup
                                            Arrive(tma_to_gmem_async) >> stores
                                            Await(stores, cuda_in_order, 0)
                                Fence(cuda_in_order, cuda_in_order)

    return rename(gemm, name)


gemm_m128n256_rmem_1x1 = ws_gemm("gemm_m128n256_rmem_1x1", 128, 256, 1, 1, "rmem")
gemm_m128n256_rmem_2x1 = ws_gemm("gemm_m128n256_rmem_2x1", 128, 256, 2, 1, "rmem")
gemm_m128n256_rmem_1x2 = ws_gemm("gemm_m128n256_rmem_1x2", 128, 256, 1, 2, "rmem")
gemm_m128n256_rmem_2x2 = ws_gemm("gemm_m128n256_rmem_2x2", 128, 256, 2, 2, "rmem")
gemm_m256n192_rmem_2x2 = ws_gemm("gemm_m256n192_rmem_2x2", 256, 192, 2, 2, "rmem")
# The staged epilogues: at the end of its scope (SEM-4.7) the ring stays alive next to the
# staging tile, which fits in 227 KiB with 128 x 128 tiles, not with 128 x 256; a proved early
# release of the ring before c_s (specs/codegen.md CG-R1) lets c_s take the ring's storage.
gemm_m128n128_reduce_2x2 = ws_gemm("gemm_m128n128_reduce_2x2", 128, 128, 2, 2, "reduce")
gemm_m128n128_reduce_2x1 = ws_gemm("gemm_m128n128_reduce_2x1", 128, 128, 2, 1, "reduce")
gemm_m128n128_tma_1x2 = ws_gemm("gemm_m128n128_tma_1x2", 128, 128, 1, 2, "tma")
gemm_m128n256_reduce_2x2 = ws_gemm("gemm_m128n256_reduce_2x2", 128, 256, 2, 2, "reduce")
# seeded for the early release: no Fence before c_s (the ring's free is only ordered later)
gemm_m128n256_reduce_2x2_nofence = ws_gemm("gemm_m128n256_reduce_2x2_nofence", 128, 256, 2, 2,
                                           "reduce", staging_fence=False)
