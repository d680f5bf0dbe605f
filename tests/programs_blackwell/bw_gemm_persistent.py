# expect: bw_gemm_persistent proved
# specs/blackwell.md BW-6: a persistent tcgen05 GEMM with a 2-stage TMEM accumulator ring. Each
# CTA computes NT tiles of 128 x 64 in turn; warp 0 loads A and B by TMA into one SMEM
# stage (raw / war), thread 32 (warp 1) issues the MMAs of tile t into accumulator stage t % 2
# (columns 64 * (t % 2) ..) once the epilogue has released that stage (Await(empty, ~2): two tiles in flight), and
# commits each K step to `war` and the tile to `full`; the epilogue warpgroup waits on `full`,
# reads the stage by tcgen05.ld, waits for the load (tcgen05.wait::ld), releases the stage to
# the MMA thread (`empty`) and stores C, while the MMA thread already fills the other stage.
from verifier.lang import *


@proc
def bw_gemm_persistent(T: size, NT: size, KT: size, A: f32[T, NT, 128, 8 * KT] @ CudaGmemLinear,
                       B: f32[64, 8 * KT] @ CudaGmemLinear, C: f32[T, NT, 128, 64] @ CudaGmemLinear):
    assert KT > 0
    assert NT > 0
    A_map = A[:, :, :, :] @ Sm90_tensorMap(32, 1, 1, 128, 8)
    B_map = B[:, :] @ Sm90_tensorMap(32, 64, 8)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[128, 8] @ Sm90_SmemSwizzled(32)
            B_s: f32[64, 8] @ Sm90_SmemSwizzled(32)
            D: f32[128, 128] @ Sm100_Tmem
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            with CudaWarps(0, 1):
                Sm100_tmem_alloc(D[:, :], ncols=128)
                Sm100_tmem_relinquish_alloc_permit()
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            for tile in seq(0, NT):
                with CudaWarps(1, 2):
                    for t in cuda_threads(0, 1, unit=cuda_thread):
                        Await(empty, tcgen05_after_thread_sync, ~2)
                for k in seq(0, KT):
                    with CudaWarps(0, 1):
                        Await(war, cuda_temporal, ~1)
                        Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[:, :], A_map[task, tile, :, 8 * k:8 * k + 8], size0=128, size1=8, smem_box=(1, 1, 128, 8)) >> raw
                        Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[:, :], B_map[0:64, 8 * k:8 * k + 8], size0=64, size1=8) >> raw
                        Arrive(cuda_temporal) >> raw
                    with CudaWarps(1, 2):
                        for t in cuda_threads(0, 1, unit=cuda_thread):
                            Await(raw, cuda_generic_and_async_proxy, ~0)
                            if k == 0:
                                Sm100_mma_tf32_zero_cta1(D[:, 64 * (tile % 2):64 * (tile % 2) + 64], A_s[:, :], B_s[:, :], M=128, N=64)
                            else:
                                Sm100_mma_tf32_cta1(D[:, 64 * (tile % 2):64 * (tile % 2) + 64], A_s[:, :], B_s[:, :], M=128, N=64)
                            Arrive(tcgen05_commit) >> war
                with CudaWarps(1, 2):
                    for t in cuda_threads(0, 1, unit=cuda_thread):
                        Arrive(tcgen05_commit) >> full
                with CudaWarps(4, 8):
                    Await(full, tcgen05_after_thread_sync, ~0)
                    Dr: f32[128, 64] @ Sm100_RmemMatrixD
                    Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[:, 64 * (tile % 2):64 * (tile % 2) + 64], N=64)
                    Fence(tcgen05_ld, cuda_in_order)
                    Arrive(cuda_in_order) >> empty
                    Sm100_store_d_row_major_f32(C[task, tile, :, :], Dr[:, :], N=64)
            Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(0, 1):
                Sm100_tmem_dealloc(D[:, :], ncols=128)
