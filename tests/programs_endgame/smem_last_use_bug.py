# expect: smem_last_use_bug refuted WAR a 19
# DIAL-17 seeded bug (upstream's test_coop_missing_cluster_sync_before_epilogue): no Fence
# between the last reads of `a` and the allocation of `b`, where upstream's suballocator frees
# `a` and reuses its space; the Fences before the end of the task come too late.
from verifier.lang import *
from exo.platforms.cuda_tk import *


@proc
def smem_last_use_bug(x: f32[128] @ CudaGmemLinear, y: f32[128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 1):
            a: f32[128] @ CudaSmemLinear
            for t in cuda_threads(0, 128):
                a[t] = x[t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 128):
                y[t] = a[127 - t]
            b: f32[128] @ CudaSmemLinear
            for t in cuda_threads(0, 128):
                b[t] = x[t]
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 128):
                y[t] = b[127 - t]
            Fence(cuda_in_order, cuda_in_order)
