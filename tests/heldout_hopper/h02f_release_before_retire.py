# expect: h02f_release_before_retire refuted WAR A_s 29
# Seeded bug: the consumer releases the slot (Arrive >> war) before its wait_group 1. Arrive
# #k then carries only what earlier waits retired (the reads of iteration k - 2), while
# producer await #j (pairing with arrive #(j - 2)) needs iteration j - 3's reads of slot j % 3
# retired: WAR HAZARD @ A_s at the A TMA (SEM-6.9: pairing is decided at the Arrive; SEM-4.5).
from verifier.lang import *


@proc
def h02f_release_before_retire(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
                          B: f32[64, 32 * K] @ CudaGmemLinear,
                          C: f32[64 * T, 64] @ CudaGmemLinear):
    assert K > 0
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[3, 64, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[3, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            D: f32[64, 64] @ Sm90_RmemMatrixD(64, 64)
            cg: barrier @ CudaCommitGroup
            with CudaWarps(4, 8):
                Sm90_zero_scale_d_f32(D[:, :], M=64, N=64)
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~2)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[k % 3, :, :], A_map[64 * task:64 * task + 64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                    Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[k % 3, :, :], B_map[0:64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    Await(raw, cuda_generic_and_async_proxy, ~0)
                    Fence(wgmma_fence_1, wgmma_fence_2)
                    for kk in seq(0, 4):
                        Sm90_mma_async_tf32(D[:, :], A_s[k % 3, :, 8 * kk:8 * kk + 8], B_s[k % 3, :, 8 * kk:8 * kk + 8], M=64, N=64)
                    Arrive(wgmma_async) >> cg
                    Arrive(cuda_in_order) >> war
                    Await(cg, cuda_in_order, 1)
            with CudaWarps(4, 8):
                Await(cg, cuda_in_order, 0)
                Sm90_mma_store_d_row_major_tf32(64, 64, C[64 * task:64 * task + 64, :], D[:, :], M=64, N=64)
            Fence(cuda_in_order, cuda_in_order)
# test: slow (over 2 s on the shared 2-core machine; runs in the slow suite)
