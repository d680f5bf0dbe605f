# expect: h17a_multicast_deadlock_only refuted deadlock bar 22
# Seeded bug (deadlock through a multicast group, nothing else wrong): h17 with each CTA
# reading back only its own row, so no data hazard exists. Await(bar[0, 0]) still waits for the
# arrives of CTAs (0, 1) and (1, 0), which come later in the sequential trace: UNSATISFIABLE
# AWAIT @ bar (ERR-V07, SEM-6.7 with G(b) of SEM-6.1) at the Await. Before the fix the SEM-6.7
# obligation counted only the awaited element's own arrives and this deadlock was PROVED.
from verifier.lang import *


@proc
def h17a_multicast_deadlock_only(T: size, inp: f32[T, 2, 2, 128] @ CudaGmemLinear,
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
                        y[task, m, n, t] = xchg[task, m, n, t]
            Fence(cuda_in_order, cuda_in_order)
