"""Kernels for the early-release tests (specs/codegen.md CG-R1..R3): a shared-memory tile `x`
used, then a second tile `y` allocated in the same block. Load with
`verifier.load.load.load_procs`, not `import`.
"""

from verifier.lang import *


@proc
def release_fenced(nb: size, src: f32[nb, 256] @ CudaGmemLinear, dst: f32[nb, 256] @ CudaGmemLinear):
    # x's last reads are fenced before y is allocated: x may be released there
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            x: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                x[t] = src[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                dst[blk, t] = x[255 - t]
            Fence(cuda_in_order, cuda_in_order)
            y: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                y[t] = src[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                dst[blk, t] += y[255 - t]
            Fence(cuda_in_order, cuda_in_order)


@proc
def release_unfenced(nb: size, src: f32[nb, 256] @ CudaGmemLinear, dst: f32[nb, 256] @ CudaGmemLinear):
    # seeded: no Fence between x's last reads and y's allocation (y's writes would overwrite
    # x while another thread may still read it); the end-of-scope frees are still fenced
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            x: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                x[t] = src[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                dst[blk, t] = x[255 - t]
            y: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                y[t] = src[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 256):
                dst[blk, t] += y[255 - t]
            Fence(cuda_in_order, cuda_in_order)


@proc
def hopper_release(T: size, A: f32[64 * T, 32] @ CudaGmemLinear, B: f32[64, 32] @ CudaGmemLinear,
                   C: f32[64, 64 * T] @ CudaGmemLinear):
    # TMA loads and wgmma reads of A_s and B_s, all retired and fenced before the epilogue
    # tile C_s is allocated: C_s may take their storage (as sporkbench's split-K GEMMs)
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 64, 32)
    C_map = C[:, :] @ Sm90_tensorMap(0, 64, 64)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            D: f32[1, 64, 64] @ Sm90_RmemMatrixD(64, 64)
            A_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            cgb: barrier[1] @ CudaCommitGroup
            with CudaWarps(0, 1):
                Await(war, cuda_temporal, ~1)
                Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[:, :], A_map[64 * task:64 * task + 64, 0:32], size0=64, size1=32) >> raw
                Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[:, :], B_map[0:64, 0:32], size0=64, size1=32) >> raw
                Arrive(cuda_temporal) >> raw
            with CudaWarps(4, 8):
                Await(raw, cuda_generic_and_async_proxy, ~0)
                for wg in cuda_threads(0, 1, unit=cuda_warpgroup):
                    Sm90_zero_scale_d_f32(D[wg, :, :], M=64, N=64)
                    for kk in seq(0, 4):
                        Sm90_mma_async_tf32(D[wg, :, :], A_s[:, 8 * kk:8 * kk + 8], B_s[:, 8 * kk:8 * kk + 8], M=64, N=64)
                    Arrive(wgmma_async) >> cgb[wg]
                    Await(cgb[wg], cuda_in_order, 0)
                Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
            C_s: f32[64, 64] @ CudaSmemLinear
            with CudaWarps(4, 8):
                for wg in cuda_threads(0, 1, unit=cuda_warpgroup):
                    Sm90_mma_store_d_col_major_tf32(64, 64, C_s[:, :], D[wg, :, :], M=64, N=64)
            Fence(cuda_in_order, cuda_generic_and_async_proxy)
            with CudaWarps(0, 1):
                Sm90_copy_tensor_to_gmem_linear_2f32(C_map[0:64, 64 * task:64 * task + 64], C_s[:, :], size0=64, size1=64)
                tcg: barrier @ CudaCommitGroup
                Arrive(tma_to_gmem_async) >> tcg
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)


@proc
def hopper_release_wgmma_in_flight(T: size, A: f32[64 * T, 32] @ CudaGmemLinear, B: f32[64, 32] @ CudaGmemLinear,
                   C: f32[64, 64 * T] @ CudaGmemLinear):
    # seeded: the wgmma commit group is awaited only in the epilogue, after C_s is allocated,
    # so at C_s's allocation the wgmma reads of A_s and B_s may still be in flight
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 64, 32)
    C_map = C[:, :] @ Sm90_tensorMap(0, 64, 64)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            D: f32[1, 64, 64] @ Sm90_RmemMatrixD(64, 64)
            A_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            cgb: barrier[1] @ CudaCommitGroup
            with CudaWarps(0, 1):
                Await(war, cuda_temporal, ~1)
                Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[:, :], A_map[64 * task:64 * task + 64, 0:32], size0=64, size1=32) >> raw
                Sm90_copy_tensor_to_smem_swizzled_2f32(B_s[:, :], B_map[0:64, 0:32], size0=64, size1=32) >> raw
                Arrive(cuda_temporal) >> raw
            with CudaWarps(4, 8):
                Await(raw, cuda_generic_and_async_proxy, ~0)
                for wg in cuda_threads(0, 1, unit=cuda_warpgroup):
                    Sm90_zero_scale_d_f32(D[wg, :, :], M=64, N=64)
                    for kk in seq(0, 4):
                        Sm90_mma_async_tf32(D[wg, :, :], A_s[:, 8 * kk:8 * kk + 8], B_s[:, 8 * kk:8 * kk + 8], M=64, N=64)
                    Arrive(wgmma_async) >> cgb[wg]
                Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
            C_s: f32[64, 64] @ CudaSmemLinear
            with CudaWarps(4, 8):
                for wg in cuda_threads(0, 1, unit=cuda_warpgroup):
                    Await(cgb[wg], cuda_in_order, 0)
                    Sm90_mma_store_d_col_major_tf32(64, 64, C_s[:, :], D[wg, :, :], M=64, N=64)
            Fence(cuda_in_order, cuda_generic_and_async_proxy)
            with CudaWarps(0, 1):
                Sm90_copy_tensor_to_gmem_linear_2f32(C_map[0:64, 64 * task:64 * task + 64], C_s[:, :], size0=64, size1=64)
                tcg: barrier @ CudaCommitGroup
                Arrive(tma_to_gmem_async) >> tcg
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
