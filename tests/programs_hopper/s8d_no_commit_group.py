# expect: s8d_no_commit_group refuted RAW D 29
# semantics.md S8d: no wgmma commit group: the in-order store reads the accumulator while wgmma may still write it.
from verifier.lang import *


@proc
def s8d_no_commit_group(T: size, A: f32[64 * T, 32] @ CudaGmemLinear, B: f32[64, 32] @ CudaGmemLinear,
                 C: f32[T, 64, 64] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            with CudaWarps(0, 1):
                Await(war, cuda_temporal, ~1)
                Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[:, :], A_map[64 * task:64 * task + 64, 0:32], size0=64, size1=32) >> raw
                Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[:, :], B_map[0:64, 0:32], size0=64, size1=32) >> raw
                Arrive(cuda_temporal) >> raw
            with CudaWarps(4, 8):
                Await(raw, cuda_generic_and_async_proxy, ~0)
                for wg in cuda_threads(0, 1, unit=cuda_warpgroup):
                    D: f32[64, 64] @ Sm90_RmemMatrixD(64, 64)
                    Sm90_zero_scale_d_f32(D[:, :], M=64, N=64)
                    for kk in seq(0, 4):
                        Sm90_mma_async_tf32(D[:, :], A_s[:, 8 * kk:8 * kk + 8], B_s[:, 8 * kk:8 * kk + 8], M=64, N=64)
                    Sm90_mma_store_d_row_major_tf32(64, 64, C[task, :, :], D[:, :], M=64, N=64)
                Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
