# expect: h13a_in_order_fence_for_cp_async refuted RAW Y_s 31
# Seeded bug: the cp.async completion fence is Fence(cuda_in_order, cuda_in_order). Its first
# full set {cuda1, cuda2} does not contain Sm80, so the cp.async records (Sm80, issue only,
# OOO) are witnessed by nothing and stay visible to nobody (SEM-4.6, S5a): RAW HAZARD @ Y_s
# at the read (SEM-4.5).
from verifier.lang import *


@proc
def h13a_in_order_fence_for_cp_async(T: size, X: f32[32 * T, 32] @ CudaGmemLinear,
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
            Fence(cuda_in_order, cuda_in_order)
            Await(raw, cuda_in_order, ~0)
            for t in cuda_threads(0, 128):
                for j in seq(0, 8):
                    out[32 * task + t / 4, 8 * (t % 4) + j] = X_s[t / 4, 8 * (t % 4) + j] + Y_s[t / 4, 8 * (t % 4) + j]
            Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
