# expect: s10b_no_store_commit_group refuted WAR C_s 11
# semantics.md S10b: no TMA commit group: the TMA store may still read the tile when it is freed.
from verifier.lang import *


@proc
def s10b_no_store_commit_group(inp: f32[2, 64, 64] @ CudaGmemLinear, C: f32[128, 64] @ CudaGmemLinear):
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
            Fence(cuda_in_order, cuda_in_order)
