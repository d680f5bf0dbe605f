# expect: h03_tma_store_double_buffer proved
# spec: PROVED. Every iteration the CTA writes one of two SMEM slots with ordinary stores, a
# CTA fence Fence(cuda_in_order, cuda_generic_and_async_proxy) hands them to the async proxy
# (grants async full, SEM-3.4, SEM-8.1 item 3), warp 0 TMA-stores the slot (tmaG reads with
# X = {tmaG, async}, SEM-3.3) and keeps one bulk group in flight with Await(tcg, ., 1)
# (SEM-8.4). The trailing CTA fence passes warp 0's retired grant (group k - 1) to every
# thread, so the writes of iteration k + 1 into slot (k + 1) % 2 find temp (SEM-4.5 WAR).
# The final Await(tcg, ., 0) retires the last store before the free (SEM-4.7, S10b).
from verifier.lang import *


@proc
def h03_tma_store_double_buffer(T: size, K: size, inp: f32[T, K, 32, 32] @ CudaGmemLinear,
                                C: f32[32 * T, 32 * K] @ CudaGmemLinear):
    C_map = C[:, :] @ Sm90_tensorMap(0, 32, 32)
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            C_s: f32[2, 32, 32] @ CudaSmemLinear
            tcg: barrier @ CudaCommitGroup
            for k in seq(0, K):
                for t in cuda_threads(0, 128):
                    for j in seq(0, 8):
                        C_s[k % 2, t / 4, 8 * (t % 4) + j] = inp[task, k, t / 4, 8 * (t % 4) + j] + 1.0
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                with CudaWarps(0, 1):
                    Sm90_copy_tensor_to_gmem_linear_2f32(C_map[32 * task:32 * task + 32, 32 * k:32 * k + 32], C_s[k % 2, :, :], size0=32, size1=32)
                    Arrive(tma_to_gmem_async) >> tcg
                    Await(tcg, cuda_in_order, 1)
                Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(0, 1):
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
