# expect: h14b_overwrite_during_wgmma refuted WAR B_s 36
# Seeded bug: right after committing the wgmma group, before its wait, the warpgroup overwrites
# part of B_s with ordinary stores. The wgmma's reads (wgS, issue only, OOO) are witnessed by
# no sync yet (SEM-4.6), so the write lacks temp: WAR HAZARD @ B_s at the write (SEM-4.5).
from verifier.lang import *


@proc
def h14b_overwrite_during_wgmma(T: size, A: f32[64 * T, 32] @ CudaGmemLinear,
                         Bg: f32[T, 64, 32] @ CudaGmemLinear,
                         C: f32[64 * T, 64] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            D: f32[64, 64] @ Sm90_RmemMatrixD(64, 64)
            cg: barrier @ CudaCommitGroup
            for t in cuda_threads(0, 256):
                for j in seq(0, 8):
                    B_s[t / 4, 8 * (t % 4) + j] = Bg[task, t / 4, 8 * (t % 4) + j] * 0.5
            Fence(cuda_in_order, cuda_generic_and_async_proxy)
            with CudaWarps(0, 1):
                Await(war, cuda_temporal, ~1)
                Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[:, :], A_map[64 * task:64 * task + 64, 0:32], size0=64, size1=32) >> raw
                Arrive(cuda_temporal) >> raw
            with CudaWarps(4, 8):
                Await(raw, cuda_generic_and_async_proxy, ~0)
                Sm90_zero_scale_d_f32(D[:, :], M=64, N=64)
                for kk in seq(0, 4):
                    Sm90_mma_async_tf32(D[:, :], A_s[:, 8 * kk:8 * kk + 8], B_s[:, 8 * kk:8 * kk + 8], M=64, N=64)
                Arrive(wgmma_async) >> cg
                for t in cuda_threads(0, 128):
                    B_s[t / 2, 16 * (t % 2)] = 0.0
                Await(cg, cuda_in_order, 0)
                Sm90_mma_store_d_row_major_tf32(64, 64, C[64 * task:64 * task + 64, :], D[:, :], M=64, N=64)
                Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
