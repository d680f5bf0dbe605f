# expect: h02_wgmma_wait1_ring3 proved
# spec: PROVED. Sm90a main loop with one wgmma group in flight: 3 data slots, Await(war, ~2)
# (ring depth 2, LANG-5.19), consumer Await(cg, cuda_in_order, 1) = wait_group 1 (SEM-8.4,
# SEM-6.4: after arrive #k, wait_group 1 retires groups <= k - 1, so consumer arrive #k on war
# witnesses the wgmma reads of iteration k - 1). Producer await #j pairs with arrive #(j - 2), which covers
# the reads of iteration j - 3 = the previous use of slot j % 3 (SEM-4.5 WAR on A_s/B_s
# needs temp on async). The last group is retired by Await(cg, cuda_in_order, 0) before the
# accumulator store (S8); the first wgmma consumes the zero through wg0 (SEM-9).
from verifier.lang import *


@proc
def h02_wgmma_wait1_ring3(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
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
                    Await(cg, cuda_in_order, 1)
                    Arrive(cuda_in_order) >> war
            with CudaWarps(4, 8):
                Await(cg, cuda_in_order, 0)
                Sm90_mma_store_d_row_major_tf32(64, 64, C[64 * task:64 * task + 64, :], D[:, :], M=64, N=64)
            Fence(cuda_in_order, cuda_in_order)
