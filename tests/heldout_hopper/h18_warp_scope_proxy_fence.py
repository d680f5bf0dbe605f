# expect: h18_warp_scope_proxy_fence refuted RAW C_s 24
# Seeded bug: each warp writes its quarter of C_s and runs the proxy fence at WARP scope
# (Fence(cuda_in_order, cuda_generic_and_async_proxy) under a cuda_warp loop, legal by
# LANG-5.20: fence.proxy.async without a CTA barrier); warp 0 then TMA-stores the whole tile.
# A warp-scope fence orders only its own warp (SEM-5.5, S4): the store's read of rows written
# by warps 1-3 lacks async full for warp 0's lanes: RAW HAZARD @ C_s at the store (SEM-4.5).
from verifier.lang import *


@proc
def h18_warp_scope_proxy_fence(T: size, inp: f32[T, 32, 32] @ CudaGmemLinear,
                               C: f32[32 * T, 32] @ CudaGmemLinear):
    C_map = C[:, :] @ Sm90_tensorMap(0, 32, 32)
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            C_s: f32[32, 32] @ CudaSmemLinear
            for w in cuda_threads(0, 4, unit=cuda_warp):
                for l in cuda_threads(0, 32):
                    for j in seq(0, 8):
                        C_s[8 * w + j, l] = inp[task, 8 * w + j, l]
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
            with CudaWarps(0, 1):
                tcg: barrier @ CudaCommitGroup
                Sm90_copy_tensor_to_gmem_linear_2f32(C_map[32 * task:32 * task + 32, 0:32], C_s[:, :], size0=32, size1=32)
                Arrive(tma_to_gmem_async) >> tcg
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
