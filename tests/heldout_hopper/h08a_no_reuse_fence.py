# expect: h08a_no_reuse_fence refuted WAR D 25
# Seeded bug (missing wgmma fence before accumulator reuse): without the per-tile
# Fence(wgmma_fence_1, wgmma_fence_2), the zero-scale write of tile n = 1 (X = {wg0, wgD})
# meets the in-order store's read record of D (cuda1 only): WAR HAZARD @ D at the zero
# (SEM-4.5, S9); NT = 2.
from verifier.lang import *


@proc
def h08a_no_reuse_fence(T: size, NT: size, A: f32[64 * T, 64] @ CudaGmemLinear,
                               B: f32[64 * NT, 64] @ CudaGmemLinear,
                               C: f32[64 * T, 64 * NT] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[2, 64, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[2, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            D: f32[64, 64] @ Sm90_RmemMatrixD(64, 64)
            cg: barrier @ CudaCommitGroup
            for n in seq(0, NT):
                with CudaWarps(4, 8):
                    Sm90_zero_scale_d_f32(D[:, :], M=64, N=64)
                for k in seq(0, 2):
                    with CudaWarps(0, 1):
                        Await(war, cuda_temporal, ~1)
                        Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[k, :, :], A_map[64 * task:64 * task + 64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                        Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[k, :, :], B_map[64 * n:64 * n + 64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                        Arrive(cuda_temporal) >> raw
                    with CudaWarps(4, 8):
                        Await(raw, cuda_generic_and_async_proxy, ~0)
                        for kk in seq(0, 4):
                            Sm90_mma_async_tf32(D[:, :], A_s[k, :, 8 * kk:8 * kk + 8], B_s[k, :, 8 * kk:8 * kk + 8], M=64, N=64)
                        Arrive(wgmma_async) >> cg
                        Await(cg, cuda_in_order, 0)
                        Arrive(cuda_in_order) >> war
                with CudaWarps(4, 8):
                    Sm90_mma_store_d_row_major_tf32(64, 64, C[64 * task:64 * task + 64, 64 * n:64 * n + 64], D[:, :], M=64, N=64)
            Fence(cuda_in_order, cuda_in_order)
