# expect: ring_cp_async_free proved
# A ring mbarrier arrived on by cp.async (noinc: the arrive completes asynchronously), whose
# phase every thread awaits: at the end of `bar`'s scope the arrive is complete, so the
# lowering's CTA barrier before the next task's re-initialisation of `bar` orders it (DIAL-20);
# no final Fence is needed (endgame's sync_check agrees). Until DIAL-20 this was refuted
# (DIAL-12 asked every thread to see the arrive). Its bug: ring_cp_async_free_bug_unawaited.py.
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
