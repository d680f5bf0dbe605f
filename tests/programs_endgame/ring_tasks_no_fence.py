# expect: ring_tasks_no_fence proved
# A producer warp hands rows of x to a consumer warp through two in-order ring mbarriers, for
# T tasks, with no final Fence: endgame's sync-check exempts ring mbarriers from the free check
# and so does spork-verify when every Arrive on the ring is in order (DIAL-12): the lowering
# orders the previous task's slot accesses before each re-initialisation by a CTA barrier of
# its own (DIAL-13). Data lives in global memory, whose free is not checked.
from verifier.lang import *

warps = [CudaWarpConfig("producer", 1), CudaWarpConfig("consumer", 1)]


@proc
def ring_tasks_no_fence(T: size, N: size, x: f32[T, N, 32] @ CudaGmemLinear,
                        y: f32[T, N, 32] @ CudaGmemLinear):
    assert N >= 1
    with CudaDeviceFunction(warp_config=warps):
        for task in cuda_tasks(0, T):
            full: barrier[N @ ring_buffer_by(2)] @ CudaMbarrier
            empty: barrier[(N + 2) @ ring_buffer_by(2)] @ CudaMbarrierPreArrive(2)
            for n in seq(0, N):
                with CudaWarps(name="producer"):
                    Await(empty[n], cuda_in_order, 0)
                    for t in cuda_threads(0, 32):
                        x[task, n, t] = 1.0
                    Arrive(cuda_in_order) >> full[n]
                with CudaWarps(name="consumer"):
                    Await(full[n], cuda_in_order, 0)
                    for t in cuda_threads(0, 32):
                        y[task, n, t] = x[task, n, t]
                    Arrive(cuda_in_order) >> empty[n + 2]
