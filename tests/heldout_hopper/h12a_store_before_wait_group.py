# expect: h12a_store_before_wait_group refuted RAW D 37
# Seeded bug (wait_group too late): the accumulator is stored to C_s before
# Await(cg, cuda_in_order, 0). The in-order store reads D (X = {cuda1}) while the last wgmma's
# record has only wgD, not yet witnessed by a retired group: RAW HAZARD @ D at the store
# (SEM-4.5, S8d).
from verifier.lang import *


@proc
def h12a_store_before_wait_group(M: size, S: size, A: f32[S, 64 * M, 32] @ CudaGmemLinear,
                          B: f32[S, 64, 32] @ CudaGmemLinear,
                          C: f32[64 * M, 64] @ CudaGmemLinear):
    A_map = A[:, :, :] @ Sm90_tensorMap(128, 1, 64, 32)
    B_map = B[:, :, :] @ Sm90_tensorMap(128, 1, 64, 32)
    C_map = C[:, :] @ Sm90_tensorMap(0, 64, 64)
    with CudaDeviceFunction(blockDim=256):
        for m in cuda_tasks(0, M):
            for s in cuda_tasks(0, S):
                A_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
                B_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
                C_s: f32[64, 64] @ CudaSmemLinear
                raw: barrier @ CudaMbarrier
                war: barrier(raw) @ CudaMbarrier
                D: f32[64, 64] @ Sm90_RmemMatrixD(64, 64)
                cg: barrier @ CudaCommitGroup
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~1)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[:, :], A_map[s, 64 * m:64 * m + 64, 0:32], size0=64, size1=32, smem_box=(1, 64, 32)) >> raw
                    Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[:, :], B_map[s, 0:64, 0:32], size0=64, size1=32, smem_box=(1, 64, 32)) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    Await(raw, cuda_generic_and_async_proxy, ~0)
                    Sm90_zero_scale_d_f32(D[:, :], M=64, N=64)
                    for kk in seq(0, 4):
                        Sm90_mma_async_tf32(D[:, :], A_s[:, 8 * kk:8 * kk + 8], B_s[:, 8 * kk:8 * kk + 8], M=64, N=64)
                    Arrive(wgmma_async) >> cg
                    Sm90_mma_store_d_row_major_tf32(64, 64, C_s[:, :], D[:, :], M=64, N=64)
                    Await(cg, cuda_in_order, 0)
                    Arrive(cuda_in_order) >> war
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                with CudaWarps(0, 1):
                    Sm90_reduce_tensor_to_gmem_linear_2f32(C_map[64 * m:64 * m + 64, 0:64], C_s[:, :], size0=64, size1=64)
                    tcg: barrier @ CudaCommitGroup
                    Arrive(tma_to_gmem_async) >> tcg
                    Await(tcg, cuda_in_order, 0)
                Fence(cuda_in_order, cuda_in_order)
