# expect: h03a_no_proxy_fence refuted RAW C_s 23
# Seeded bug (missing proxy fence before a TMA store): the hand-off fence is
# Fence(cuda_in_order, cuda_in_order), which grants async only temporally (SEM-3.4), while the
# TMA store's read (X = {tmaG, async}) needs full: RAW HAZARD @ C_s at the store (SEM-4.5;
# lowering: no fence.proxy.async, SEM-8.1).
from verifier.lang import *


@proc
def h03a_no_proxy_fence(T: size, K: size, inp: f32[T, K, 32, 32] @ CudaGmemLinear,
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
                Fence(cuda_in_order, cuda_in_order)
                with CudaWarps(0, 1):
                    Sm90_copy_tensor_to_gmem_linear_2f32(C_map[32 * task:32 * task + 32, 32 * k:32 * k + 32], C_s[k % 2, :, :], size0=32, size1=32)
                    Arrive(tma_to_gmem_async) >> tcg
                    Await(tcg, cuda_in_order, 1)
                Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(0, 1):
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
