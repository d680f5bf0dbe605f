# expect: packed_mma proved
# Upstream's xgemm_Sm80_fence (tests/cuda/test_simple_cuda.py, endgame) cut down to one 16 x 16
# tile of C and two warps: cp.async copies A and B tiles into double-buffered SMEM, one
# Fence(Sm80_generic, cuda_in_order) per K tile, each thread packs its own fragments into
# registers (cuda_packed32_load) and the warp's Sm80_mma_m16n8 reads them. The mma reads A_rmem
# and B_rmem convergently (cuda1), so the load by one thread is in program order before it
# (SEM-4.6: C_b meets T_a); the encoder took any thread of the warp for the reader and left a
# candidate the machine did not reproduce (specs/verification.md Choice E8).
from verifier.lang import *


@proc
def packed_mma(K: size, A: f32[16, K] @ CudaGmemLinear, B: f32[K, 16] @ CudaGmemLinear,
               C: f32[16, 16] @ CudaGmemLinear):
    assert K % 16 == 0
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            A_smem: f32[2, 16, 16] @ CudaSmemLinear
            B_smem: f32[2, 16, 16] @ CudaSmemLinear
            D_rmem: f32[2, 16, 8] @ Sm80_RmemMatrixD(16, 8)
            for w in cuda_threads(0, 2, unit=cuda_warp):
                Sm80_mma_m16n8_zero(D_rmem[w, :, :], D=f32)
            for k1 in seq(0, K / 16 + 1):
                if k1 < K / 16:
                    for r in cuda_threads(0, 16, unit=4 * cuda_thread):
                        for c in cuda_threads(0, 4, unit=cuda_thread):
                            Sm80_cp_async_f32(A_smem[k1 % 2, r, 4 * c:4 * c + 4],
                                              A[r, 16 * k1 + 4 * c:16 * k1 + 4 * c + 4], size=4)
                            Sm80_cp_async_f32(B_smem[k1 % 2, r, 4 * c:4 * c + 4],
                                              B[16 * k1 + r, 4 * c:4 * c + 4], size=4)
                if k1 > 0:
                    for w in cuda_threads(0, 2, unit=cuda_warp):
                        A_rmem: f32[8, 4, 2, 2, 2, 1] @ CudaRmemPacked32
                        B_rmem: f32[8, 4, 2, 2, 1] @ CudaRmemPacked32
                        for k_seq in seq(0, 2):
                            for mt in cuda_threads(0, 8, unit=4 * cuda_thread):
                                for kt in cuda_threads(0, 4, unit=cuda_thread):
                                    for mi in seq(0, 2):
                                        for ki in seq(0, 2):
                                            cuda_packed32_load(
                                                A_rmem[mt, kt, k_seq, mi, ki, :],
                                                A_smem[1 - k1 % 2, mt + 8 * mi,
                                                       8 * k_seq + kt + 4 * ki:8 * k_seq + kt + 4 * ki + 1],
                                                dst=f32, src=f32, pack=1)
                                        cuda_packed32_load(
                                            B_rmem[mt, kt, k_seq, mi, :],
                                            B_smem[1 - k1 % 2, 8 * k_seq + kt + 4 * mi,
                                                   8 * w + mt:8 * w + mt + 1],
                                            dst=f32, src=f32, pack=1)
                        for k_seq in seq(0, 2):
                            Sm80_mma_m16n8(D_rmem[w, :, :], A_rmem[:, :, k_seq, :, :, :],
                                           B_rmem[:, :, k_seq, :, :], K_pack=1, D="f32", A="f32",
                                           B="f32")
                Fence(Sm80_generic, cuda_in_order)
            for w in cuda_threads(0, 2, unit=cuda_warp):
                Sm80_mma_store_d_row_major_tf32(C[0:16, 8 * w:8 * w + 8], D_rmem[w, :, :])
