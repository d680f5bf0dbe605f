# expect: s8r_tma_ring proved
# A TMA producer over a 2-slot ring (the sporkbench Sm90a main loop): the producer refills slot
# k % 2 only after Await(war, ~1) saw the consumer release it (LANG-5.19, SEM-6.8).
from verifier.lang import *


@proc
def s8r_tma_ring(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
                 C: f32[T, 64, 64] @ CudaGmemLinear):
    assert K > 0
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[2, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            D: f32[64, 64] @ Sm90_RmemMatrixD(64, 64)
            cgb: barrier @ CudaCommitGroup
            with CudaWarps(4, 8):
                Sm90_zero_scale_d_f32(D[:, :], M=64, N=64)
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~1)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[k % 2, :, :], A_map[64 * task:64 * task + 64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    Await(raw, cuda_generic_and_async_proxy, ~0)
                    Fence(wgmma_fence_1, wgmma_fence_2)
                    for kk in seq(0, 4):
                        Sm90_mma_async_tf32(D[:, :], A_s[k % 2, :, 8 * kk:8 * kk + 8], A_s[k % 2, :, 8 * kk:8 * kk + 8], M=64, N=64)
                    Arrive(wgmma_async) >> cgb
                    Await(cgb, cuda_in_order, 0)
                    Arrive(cuda_in_order) >> war
            with CudaWarps(4, 8):
                Sm90_mma_store_d_row_major_tf32(64, 64, C[task, :, :], D[:, :], M=64, N=64)
            Fence(cuda_in_order, cuda_in_order)
