# expect: ring_cp_async_free refuted WAR bar 12
# A ring mbarrier arrived on by cp.async (noinc: the arrive completes asynchronously) keeps the
# SEM-4.7 free check (DIAL-12): without a final CTA Fence, thread 0's re-initialisation of `bar`
# for the next task is not ordered after the other threads' Await on it.
from verifier.lang import *


@proc
def ring_cp_async_free(T: size, src: f32[T, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, T):
            bar: barrier[1 @ ring_buffer_by(1)] @ CudaMbarrier
            smem: f32[128] @ CudaSmemLinear
            for tid in cuda_threads(0, 32):
                Sm80_cp_async_f32(smem[4 * tid:4 * tid + 4], src[task, 4 * tid:4 * tid + 4],
                                  size=4)
            Arrive(Sm80_cp_async, 1) >> bar[0]
            Await(bar[0], cuda_in_order, 0)
