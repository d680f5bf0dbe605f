"""Hopper kernels for the codegen tests (semantics.md S8-S10, S14 and small TMA + wgmma GEMMs;
s9_accumulator_reuse is S8 followed by a second product into the same accumulator).

The verifier does not prove Sm90 programs yet (the stdlib's Sm90 instructions are
`unmodelled`), so the tests certify these by hand (a Certificate with the proc's own IR hash),
as codegen_forged.py does; each follows the reference's synchronization. Load with
`load_procs`, not `import`.
"""

from verifier.lang import *


@proc
def s9_accumulator_reuse(T: size, A: f32[64 * T, 32] @ CudaGmemLinear, B: f32[64, 32] @ CudaGmemLinear, C: f32[T, 64, 64] @ CudaGmemLinear, C2: f32[T, 64, 64] @ CudaGmemLinear):
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
                    cgb: barrier @ CudaCommitGroup
                    Sm90_zero_scale_d_f32(D[:, :], M=64, N=64)
                    for kk in seq(0, 4):
                        Sm90_mma_async_tf32(D[:, :], A_s[:, 8 * kk:8 * kk + 8], B_s[:, 8 * kk:8 * kk + 8], M=64, N=64)
                    Arrive(wgmma_async) >> cgb
                    Await(cgb, cuda_in_order, 0)
                    Sm90_mma_store_d_row_major_tf32(64, 64, C[task, :, :], D[:, :], M=64, N=64)
                    Fence(wgmma_fence_1, wgmma_fence_2)
                    Sm90_zero_scale_d_f32(D[:, :], M=64, N=64)
                    for kk in seq(0, 4):
                        Sm90_mma_async_tf32(D[:, :], A_s[:, 8 * kk:8 * kk + 8], B_s[:, 8 * kk:8 * kk + 8], M=64, N=64)
                    Arrive(wgmma_async) >> cgb
                    Await(cgb, cuda_in_order, 0)
                    Sm90_mma_store_d_col_major_tf32(64, 64, C2[task, :, :], D[:, :], M=64, N=64)
                Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)


@proc
def s10_tma_store(inp: f32[2, 64, 64] @ CudaGmemLinear, C: f32[128, 64] @ CudaGmemLinear):
    C_map = C[:, :] @ Sm90_tensorMap(0, 64, 64)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 2):
            C_s: f32[64, 64] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                for j in seq(0, 16):
                    C_s[t / 4, 16 * (t % 4) + j] = inp[task, t / 4, 16 * (t % 4) + j]
            Fence(cuda_in_order, cuda_generic_and_async_proxy)
            with CudaWarps(0, 1):
                Sm90_copy_tensor_to_gmem_linear_2f32(C_map[64 * task:64 * task + 64, 0:64], C_s[:, :], size0=64, size1=64)
                tcg: barrier @ CudaCommitGroup
                Arrive(tma_to_gmem_async) >> tcg
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)


@proc
def s10_tma_reduce(n: size, inp: f32[n, 32, 32] @ CudaGmemLinear, C: f32[4, 32, 32] @ CudaGmemLinear):
    C_map = C[:, :, :] @ Sm90_tensorMap(128, 1, 32, 32)
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, n):
            C_s: f32[32, 32] @ Sm90_SmemSwizzled(128)
            for t in cuda_threads(0, 128):
                for j in seq(0, 8):
                    C_s[t / 4, 8 * (t % 4) + j] = inp[task, t / 4, 8 * (t % 4) + j]
            Fence(cuda_in_order, cuda_generic_and_async_proxy)
            with CudaWarps(0, 1):
                Sm90_reduce_tensor_to_gmem_swizzled_2f32(C_map[task % 4, 0:32, 0:32], C_s[:, :], size0=32, size1=32)
                tcg: barrier @ CudaCommitGroup
                Arrive(tma_to_gmem_async) >> tcg
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)


@proc
def s14_multicast_arrive(T: size, inp: f32[T, 2, 2, 128] @ CudaGmemLinear, xchg: f32[T, 2, 2, 128] @ CudaGmemLinear, y: f32[T, 2, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, T):
            bar: barrier[2, 2] @ CudaMbarrier
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        xchg[task, m, n, t] = inp[task, m, n, t]
                    Arrive(cuda_in_order) >> bar[m, :] >> bar[:, n]
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    Await(bar[m, n], cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        y[task, m, n, t] = xchg[task, m, 1 - n, t] + xchg[task, 1 - m, n, t]
            Fence(cuda_in_order, cuda_in_order)


@proc
def swizzled_readback(T: size, A: f32[T, 64, 32] @ CudaGmemLinear, y: f32[T, 64, 32] @ CudaGmemLinear):
    A_map = A[:, :, :] @ Sm90_tensorMap(128, 1, 64, 32)
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            A_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
            full: barrier @ CudaMbarrier
            with CudaWarps(0, 1):
                Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[:, :], A_map[task, 0:64, 0:32], size0=64, size1=32) >> full
                Arrive(cuda_temporal) >> full
            Await(full, cuda_in_order, ~0)
            for t in cuda_threads(0, 128):
                for j in seq(0, 16):
                    y[task, t / 2, 16 * (t % 2) + j] = A_s[t / 2, 16 * (t % 2) + j]
            Fence(cuda_in_order, cuda_in_order)


@proc
def gemm_tma_wgmma(M: size, K: size, A: f32[M, K] @ CudaGmemLinear, B: f32[128, K] @ CudaGmemLinear, C: f32[M, 128] @ CudaGmemLinear):
    assert M % 128 == 0
    assert K % 32 == 0
    A_map = A[:, :] @ Sm90_tensorMap(128, 128, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 128, 32)
    with CudaDeviceFunction(warp_config=[CudaWarpConfig("producer", 1, setmaxnreg_dec=40), CudaWarpConfig("unused", 3, setmaxnreg_dec=40), CudaWarpConfig("consumer", 8, setmaxnreg_inc=232)]):
        for tm in cuda_tasks(0, M / 128):
            D: f32[2, 64, 128] @ Sm90_RmemMatrixD(64, 128)
            with CudaWarps(name="consumer"):
                for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                    Sm90_zero_scale_d_f32(D[wg, :, :], M=64, N=128)
            A_s: f32[4, 128, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[4, 128, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            cg: barrier[2] @ CudaCommitGroup
            for k in seq(0, K / 32):
                with CudaWarps(name="producer"):
                    Await(war, cuda_temporal, ~3)
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[k % 4, :, :], A_map[128 * tm:128 * tm + 128, 32 * k:32 * k + 32], size0=128, size1=32) >> raw
                    Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[k % 4, :, :], B_map[0:128, 32 * k:32 * k + 32], size0=128, size1=32) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(name="consumer"):
                    Await(raw, cuda_generic_and_async_proxy, ~0)
                    for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                        Fence(wgmma_fence_1, wgmma_fence_2)
                        for kk in seq(0, 4):
                            Sm90_mma_async_tf32(D[wg, :, :], A_s[k % 4, 64 * wg:64 * wg + 64, 8 * kk:8 * kk + 8], B_s[k % 4, :, 8 * kk:8 * kk + 8], M=64, N=128)
                        Arrive(wgmma_async) >> cg[wg]
                        Await(cg[wg], cuda_in_order, 0)
                    Arrive(cuda_in_order) >> war
            with CudaWarps(name="consumer"):
                for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                    Sm90_mma_store_d_row_major_tf32(64, 128, C[128 * tm + 64 * wg:128 * tm + 64 * wg + 64, :], D[wg, :, :], M=64, N=128)
            Fence(cuda_in_order, cuda_in_order)


@proc
def gemm_multicast(M: size, K: size, A: f32[M, K] @ CudaGmemLinear, B: f32[64, K] @ CudaGmemLinear, C: f32[M, 64] @ CudaGmemLinear):
    assert M % 128 == 0
    assert K % 32 == 0
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 32, 32)
    with CudaDeviceFunction(clusterDim=2, warp_config=[CudaWarpConfig("producer", 1, setmaxnreg_dec=40), CudaWarpConfig("unused", 3, setmaxnreg_dec=40), CudaWarpConfig("consumer", 4, setmaxnreg_inc=232)]):
        for tm in cuda_tasks(0, M / 128):
            D: f32[2, 64, 64] @ Sm90_RmemMatrixD(64, 64)
            A_s: f32[2, 2, 64, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[2, 2, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier[2] @ CudaMbarrier
            war: barrier(raw)[2] @ CudaMbarrier
            cg: barrier[2] @ CudaCommitGroup
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(name="consumer"):
                    Sm90_zero_scale_d_f32(D[c, :, :], M=64, N=64)
            for k in seq(0, K / 32):
                with CudaWarps(name="producer"):
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(war[c], cuda_temporal, ~1)
                        Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[c, k % 2, :, :], A_map[128 * tm + 64 * c:128 * tm + 64 * c + 64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw[c]
                    Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(B_s[:, k % 2, :, :], B_map[0:64, 32 * k:32 * k + 32], ncta=2, cta_stride=1, size0=64, size1=32) >> raw[:]
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Arrive(cuda_temporal) >> raw[c] >> raw[:]
                with CudaWarps(name="consumer"):
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(raw[c], cuda_generic_and_async_proxy, ~0)
                        Fence(wgmma_fence_1, wgmma_fence_2)
                        for kk in seq(0, 4):
                            Sm90_mma_async_tf32(D[c, :, :], A_s[c, k % 2, :, 8 * kk:8 * kk + 8], B_s[c, k % 2, :, 8 * kk:8 * kk + 8], M=64, N=64)
                        Arrive(wgmma_async) >> cg[c]
                        Await(cg[c], cuda_in_order, 0)
                        Arrive(cuda_in_order) >> war[c] >> war[:]
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(name="consumer"):
                    Sm90_mma_store_d_row_major_tf32(64, 64, C[128 * tm + 64 * c:128 * tm + 64 * c + 64, :], D[c, :, :], M=64, N=64)
            Fence(cuda_in_order, cuda_in_order)
