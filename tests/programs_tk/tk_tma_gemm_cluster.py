# expect: tk_tma_gemm_cluster proved
# The endgame TMA + wgmma GEMM tile of tk_tma_gemm.py on a cluster of two CTAs that share B: each
# CTA's producer warp loads its own 64 x 64 k-tile of A and multicasts its half of the 256 x 64
# k-tile of B into both CTAs (Sm90_tma_load_multicast_2d completes on the `full` element of
# every CTA it writes; specs/codegen.md TMA-CG-2), then arrives on `full` in both CTAs (which
# also orders its CTA's initialisation of `empty` before the peer's remote arrive there); each
# consumer warpgroup releases the slot to both producers (a multicast Arrive on `empty`).
from verifier.lang import *

RING = 2
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def tk_tma_gemm_cluster(K: size, A: bf16[128, K] @ CudaGmemLinear,
                        B: bf16[256, K] @ CudaGmemLinear, C: f32[128, 256] @ CudaGmemLinear):
    assert K > 0
    assert K % 64 == 0
    assert stride(A, 1) == 1
    assert stride(B, 1) == 1
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 64)
    B_map = B[:, :] @ Sm90_tensorMap(128, 128, 64)
    with CudaDeviceFunction(clusterDim=2, warp_config=warps):
        for task in cuda_tasks(0, 1):
            A_s: bf16[2, RING, 64, 64] @ Sm90_SmemSwizzled(128)
            B_s: bf16[2, RING, 256, 64] @ Sm90_SmemSwizzled(128)
            full: barrier[2, (K / 64) @ ring_buffer_by(RING)] @ CudaMbarrier
            empty: barrier[2, (K / 64 + RING) @ ring_buffer_by(RING)] @ CudaMbarrierPreArrive(RING)
            D: f32[2, 4, 16, 256] @ Sm90_TkRmemTileD(256)
            cg: barrier[2] @ Sm90_WgmmaCommitGroup
            with CudaWarps(name="consumer"):
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    Sm90_tk_zero_scale_d(D[c, :, :, :], D=f32, N=256)
            for k in seq(0, K / 64):
                with CudaWarps(name="producer"):
                    with CudaWarps(0, 1):
                        for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                            Await(empty[c, k], cuda_temporal, 0)
                        for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                            Sm90_tma_load_2d(A_s[c, k % RING, :, :],
                                             A_map[64 * c:64 * c + 64, 64 * k:64 * k + 64],
                                             size0=64, size1=64, smem_box=None, dst=bf16,
                                             src=bf16) >> full[c, k]
                        for cc in cuda_threads(0, 1, unit=2 * cuda_cta_in_cluster):
                            Sm90_tma_load_multicast_2d(
                                B_s[:, k % RING, :, :], B_map[:, 64 * k:64 * k + 64], ncta=2,
                                cta_stride=1, size0=256, size1=64, smem_box=None, dst=bf16,
                                src=bf16) >> full[:, k]
                        for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                            Arrive(cuda_in_order) >> full[c, k] >> full[:, k]
                with CudaWarps(name="consumer"):
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(full[c, k], cuda_generic_and_async_proxy, 0)
                        Fence(wgmma_fence_1, wgmma_fence_2)
                        Sm90_tk_mma_row_col(D[c, :, :, :], A_s[c, k % RING, :, :],
                                            B_s[c, k % RING, :, :], D=f32, A=bf16, B=bf16,
                                            N=256, K=64)
                        Arrive(wgmma_async) >> cg[c]
                        Await(cg[c], cuda_in_order, 0)
                        Arrive(cuda_in_order) >> empty[c, k + RING] >> empty[:, k + RING]
            with CudaWarps(name="consumer"):
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for w in cuda_threads(0, 4, unit=cuda_warp):
                        cuda_tk_store_rg(C[64 * c + 16 * w:64 * c + 16 * w + 16, :],
                                         D[c, w, :, :], size0=16, size1=256, dst=f32, src=f32)
            Fence(cuda_in_order, cuda_in_order)
