# expect: h07a_unpredicated_store refuted out-of-bounds C 40
# Seeded bug (ragged M): the epilogue stores the whole 64-row tile, M_end = 64. For M = 1 the
# last task's window C[0:64, :] leaves C, and only tensor-map windows and the restricted set of
# a bounds-predicated store clip (SEM-4.3, D4): OUT OF BOUNDS @ C (ERR-V06) at the store.
from verifier.lang import *


@proc
def h07a_unpredicated_store(M: size, K: size, A: f32[M, K] @ CudaGmemLinear,
                     B: f32[64, K] @ CudaGmemLinear, C: f32[M, 64] @ CudaGmemLinear):
    assert M > 0
    assert K > 0
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, (M + 63) / 64):
            A_s: f32[2, 64, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[2, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            D: f32[64, 64] @ Sm90_RmemMatrixD(64, 64)
            cg: barrier @ CudaCommitGroup
            with CudaWarps(4, 8):
                Sm90_zero_scale_d_f32(D[:, :], M=64, N=64)
            for k in seq(0, (K + 31) / 32):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~2)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[k % 2, :, :], A_map[64 * task:64 * task + 64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                    Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[k % 2, :, :], B_map[0:64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    Await(raw, cuda_generic_and_async_proxy, ~0)
                    Fence(wgmma_fence_1, wgmma_fence_2)
                    for kk in seq(0, 4):
                        Sm90_mma_async_tf32(D[:, :], A_s[k % 2, :, 8 * kk:8 * kk + 8], B_s[k % 2, :, 8 * kk:8 * kk + 8], M=64, N=64)
                    Arrive(wgmma_async) >> cg
                    Await(cg, cuda_in_order, 0)
                    Arrive(cuda_in_order) >> war
            with CudaWarps(4, 8):
                Sm90_mma_store_d_row_major_tf32(64, 64, C[64 * task:64 * task + 64, :], D[:, :], M=64, N=64)
            Fence(cuda_in_order, cuda_in_order)
