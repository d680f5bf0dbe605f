# expect: h05_two_consumer_wgs proved
# spec: PROVED. Named warps with setmaxnreg (LANG-4.12: uniform per warpgroup, multiples of 8
# in [24, 256], no count both inc and dec): one TMA warp of a 4-warp "load" group and two
# consumer warpgroups that share one 2-slot ring. Both warpgroups Await(raw) and Arrive war
# together (the Arrive collective of war = the Await collective of raw, LANG-5.12; init count
# 256, SEM-8.5); each runs wgmma on its 64-row half of A_s with its own commit group cg[wg]
# (LANG-5.21) and wait_group 0 before the joint release, so the producer's Await(war, ~1)
# covers both warpgroups' reads of slot k % 2 (SEM-6.4, SEM-4.5). Ring depth 1 (LANG-5.19).
from verifier.lang import *


@proc
def h05_two_consumer_wgs(T: size, K: size, A: f32[128 * T, 32 * K] @ CudaGmemLinear,
                         B: f32[64, 32 * K] @ CudaGmemLinear,
                         C: f32[128 * T, 64] @ CudaGmemLinear):
    assert K > 0
    A_map = A[:, :] @ Sm90_tensorMap(128, 128, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(warp_config=[CudaWarpConfig("load", 4, setmaxnreg_dec=56), CudaWarpConfig("math", 8, setmaxnreg_inc=224)]):
        for task in cuda_tasks(0, T):
            A_s: f32[2, 128, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[2, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            D: f32[2, 64, 64] @ Sm90_RmemMatrixD(64, 64)
            cg: barrier[2] @ CudaCommitGroup
            with CudaWarps(name="math"):
                for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                    Sm90_zero_scale_d_f32(D[wg, :, :], M=64, N=64)
            for k in seq(0, K):
                with CudaWarps(0, 1, name="load"):
                    Await(war, cuda_temporal, ~1)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[k % 2, :, :], A_map[128 * task:128 * task + 128, 32 * k:32 * k + 32], size0=128, size1=32) >> raw
                    Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[k % 2, :, :], B_map[0:64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(name="math"):
                    Await(raw, cuda_generic_and_async_proxy, ~0)
                    for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                        Fence(wgmma_fence_1, wgmma_fence_2)
                        for kk in seq(0, 4):
                            Sm90_mma_async_tf32(D[wg, :, :], A_s[k % 2, 64 * wg:64 * wg + 64, 8 * kk:8 * kk + 8], B_s[k % 2, :, 8 * kk:8 * kk + 8], M=64, N=64)
                        Arrive(wgmma_async) >> cg[wg]
                        Await(cg[wg], cuda_in_order, 0)
                    Arrive(cuda_in_order) >> war
            with CudaWarps(name="math"):
                for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                    Sm90_mma_store_d_row_major_tf32(64, 64, C[128 * task + 64 * wg:128 * task + 64 * wg + 64, :], D[wg, :, :], M=64, N=64)
            Fence(cuda_in_order, cuda_in_order)
