# expect: h13_tma_and_cp_async proved
# spec: PROVED. Two asynchronous loads feed one CTA: X by TMA (warp 0, trailing barrier, raw/war
# one-shot pair whose Await(raw, cuda_in_order, ~0) grants cuda2 full, SEM-6.5) and Y by
# per-thread cp.async, completed by a CTA Fence(Sm80_generic, cuda_in_order): Sm80 is in its
# first full set, so it witnesses every thread's cp.async records and grants cuda2 full to the
# CTA (SEM-5.3; lowers to cp.async.wait_all + barrier, SEM-8.1). The CTA then reads both.
from verifier.lang import *


@proc
def h13_tma_and_cp_async(T: size, X: f32[32 * T, 32] @ CudaGmemLinear,
                         Y: f32[32 * T, 32] @ CudaGmemLinear,
                         out: f32[32 * T, 32] @ CudaGmemLinear):
    X_map = X[:, :] @ Sm90_tensorMap(128, 32, 32)
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            X_s: f32[32, 32] @ Sm90_SmemSwizzled(128)
            Y_s: f32[32, 32] @ CudaSmemLinear
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            with CudaWarps(0, 1):
                Await(war, cuda_temporal, ~1)
                Sm90_copy_tensor_to_smem_swizzled_2f32(X_s[:, :], X_map[32 * task:32 * task + 32, 0:32], size0=32, size1=32) >> raw
                Arrive(cuda_temporal) >> raw
            for t in cuda_threads(0, 128):
                for j in seq(0, 2):
                    Sm80_cp_async_f32(Y_s[t / 4, 8 * (t % 4) + 4 * j:8 * (t % 4) + 4 * j + 4], Y[32 * task + t / 4, 8 * (t % 4) + 4 * j:8 * (t % 4) + 4 * j + 4], size=4)
            Fence(Sm80_generic, cuda_in_order)
            Await(raw, cuda_in_order, ~0)
            for t in cuda_threads(0, 128):
                for j in seq(0, 8):
                    out[32 * task + t / 4, 8 * (t % 4) + j] = X_s[t / 4, 8 * (t % 4) + j] + Y_s[t / 4, 8 * (t % 4) + j]
            Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
