# expect: s5c_thread_fence_sm80_generic proved
# semantics.md S5c: the commit-group pair (and cg) replaced by a thread-scope
# Fence(Sm80_generic, cuda_in_order) (lowers to cp.async.wait_all only). Its first sync-tl has
# Sm80 in the full set, so it witnesses thread t's cp.async record and grants {t} x cuda_in_order.
from verifier.lang import *


@proc
def s5c_thread_fence_sm80_generic(M: size, g: f32[M, 4] @ CudaGmemLinear, y: f32[M] @ CudaGmemLinear):
    assert M % 128 == 0
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, M / 128):
            s: f32[128, 4] @ CudaSmemLinear
            for t in cuda_threads(0, 128):
                Sm80_cp_async_f32(s[t, 0:4], g[128 * task + t, 0:4], size=4)
                Fence(Sm80_generic, cuda_in_order)
                y[128 * task + t] = s[t, 0] + s[t, 3]
            Fence(cuda_in_order, cuda_in_order)
