# expect: s10c_tma_store_map_param proved
# s10_tma_store with the tensor map a parameter the caller built
# (`C_map: [f32][128, 64] @ Sm90_tensorMap(0, 64, 64)`, LANG-3.4): windows of it carry the map,
# so the TMA store sees the swizzle and box it checks (ERR-A07) and clips to (SEM-4.3).
from verifier.lang import *


@proc
def s10c_tma_store_map_param(inp: f32[2, 64, 64] @ CudaGmemLinear,
                             C_map: [f32][128, 64] @ Sm90_tensorMap(0, 64, 64)):
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
