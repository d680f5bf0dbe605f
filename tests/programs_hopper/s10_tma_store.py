# expect: s10_tma_store proved
# semantics.md S10: a CTA writes a tile to SMEM in order, hands it to the async proxy with
# Fence(cuda_in_order, cuda_generic_and_async_proxy), and one warp stores it by TMA, completed
# through a TMA commit group before the tile is freed.
from verifier.lang import *


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
