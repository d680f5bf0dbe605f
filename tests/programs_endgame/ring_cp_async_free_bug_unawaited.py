# expect: ring_cp_async_free_bug_unawaited refuted WAR bar 13
# Two cp.async loads each arrive (noinc) on a ring element, but only bar[0]'s phase is awaited:
# bar[1]'s noinc arrive may land after the next task's re-initialisation of `bar` (DIAL-12).
# Refuted at `bar`'s free (DIAL-20): no thread waited for it. (smem's free is refuted too.)
from verifier.lang import *


@proc
def ring_cp_async_free_bug_unawaited(T: size, src: f32[T, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, T):
            smem: f32[2, 128] @ CudaSmemLinear
            bar: barrier[2 @ ring_buffer_by(2)] @ CudaMbarrier
            for k in seq(0, 2):
                for tid in cuda_threads(0, 32):
                    Sm80_cp_async_f32(smem[k, 4 * tid:4 * tid + 4],
                                      src[task, k, 4 * tid:4 * tid + 4], size=4)
                Arrive(Sm80_cp_async, 1) >> bar[k]
            Await(bar[0], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
