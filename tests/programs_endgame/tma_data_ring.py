# expect: tma_data_ring proved
# tests/programs_tk/tk_tma_gemm.py with its SMEM ring written as endgame's managed ring buffers
# of data (specs/dialects.md DIAL-18): `A_s`, `B_s` have K/64 logical k-tiles in RING slots,
# guarded by `empty`; the TMA loads of k-tile k follow the Await on empty[k] that hands the slot
# over, and the consumer's Arrive on empty[k + RING] after its commit group completes releases
# it. Proved for every K.
from verifier.lang import *

RING = 2
warps = [CudaWarpConfig("producer", 4), CudaWarpConfig("consumer", 4)]


@proc
def tma_data_ring(K: size, A: bf16[64, K] @ CudaGmemLinear, B: bf16[256, K] @ CudaGmemLinear,
                C: f32[64, 256] @ CudaGmemLinear):
    assert K > 0
    assert K % 64 == 0
    assert stride(A, 1) == 1
    assert stride(B, 1) == 1
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 64)
    B_map = B[:, :] @ Sm90_tensorMap(128, 256, 64)
    with CudaDeviceFunction(warp_config=warps):
        for task in cuda_tasks(0, 1):
            full: barrier[(K / 64) @ ring_buffer_by(RING)] @ CudaMbarrier
            empty: barrier[(K / 64 + RING) @ ring_buffer_by(RING)] @ CudaMbarrierPreArrive(RING)
            A_s: bf16[(K / 64) @ ring_buffer_by(RING), 64, 64].ring_guarded_by(empty) @ \
                Sm90_SmemSwizzled(128)
            B_s: bf16[(K / 64) @ ring_buffer_by(RING), 256, 64].ring_guarded_by(empty) @ \
                Sm90_SmemSwizzled(128)
            D: f32[4, 16, 256] @ Sm90_TkRmemTileD(256)
            cg: barrier @ Sm90_WgmmaCommitGroup
            with CudaWarps(name="consumer"):
                Sm90_tk_zero_scale_d(D[:, :, :], D=f32, N=256)
            for k in seq(0, K / 64):
                with CudaWarps(name="producer"):
                    with CudaWarps(0, 1):
                        Await(empty[k], cuda_temporal, 0)
                        Sm90_tma_load_2d(A_s[k, :, :], A_map[:, 64 * k:64 * k + 64],
                                         size0=64, size1=64, smem_box=None, dst=bf16,
                                         src=bf16) >> full[k]
                        Sm90_tma_load_2d(B_s[k, :, :], B_map[:, 64 * k:64 * k + 64],
                                         size0=256, size1=64, smem_box=None, dst=bf16,
                                         src=bf16) >> full[k]
                        Arrive(cuda_in_order) >> full[k]
                with CudaWarps(name="consumer"):
                    Await(full[k], cuda_generic_and_async_proxy, 0)
                    Fence(wgmma_fence_1, wgmma_fence_2)
                    Sm90_tk_mma_row_col(D[:, :, :], A_s[k, :, :], B_s[k, :, :],
                                        D=f32, A=bf16, B=bf16, N=256, K=64)
                    Arrive(wgmma_async) >> cg
                    Await(cg, cuda_in_order, 0)
                    Arrive(cuda_in_order) >> empty[k + RING]
            with CudaWarps(name="consumer"):
                for w in cuda_threads(0, 4, unit=cuda_warp):
                    cuda_tk_store_rg(C[16 * w:16 * w + 16, :], D[w, :, :], size0=16, size1=256,
                                     dst=f32, src=f32)
            Fence(cuda_in_order, cuda_in_order)
