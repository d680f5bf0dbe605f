# expect: h17_multicast_await_too_early refuted deadlock bar 22
# Seeded bug (deadlock through a multicast group): S14's exchange, but each CTA awaits its
# element right after its own Arrive, inside the same CTA loops. Await(bar[0, 0]) needs the
# arrives of every home in G(bar[0, 0]) = row 0 and column 0 (SEM-6.1), and those of CTAs
# (0, 1) and (1, 0) come later in the sequential trace: UNSATISFIABLE AWAIT @ bar (ERR-V07,
# SEM-6.7, D5) at the Await.
from verifier.lang import *


@proc
def h17_multicast_await_too_early(T: size, inp: f32[T, 2, 2, 128] @ CudaGmemLinear,
                                  xchg: f32[T, 2, 2, 128] @ CudaGmemLinear,
                                  y: f32[T, 2, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(clusterDim=4, blockDim=128):
        for task in cuda_tasks(0, T):
            bar: barrier[2, 2] @ CudaMbarrier
            for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):
                for n in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 128):
                        xchg[task, m, n, t] = inp[task, m, n, t]
                    Arrive(cuda_in_order) >> bar[m, :] >> bar[:, n]
                    Await(bar[m, n], cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        y[task, m, n, t] = xchg[task, m, 1 - n, t] + xchg[task, 1 - m, n, t]
            Fence(cuda_in_order, cuda_in_order)
