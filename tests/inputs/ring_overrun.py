# A self-guarded mbarrier arrived on twice per await (ring depth 1 + lag 0 = 1). The static
# alternation rule (LANG-5.16) rejects it (ERR-A32); with that rule switched off, the SEM-6.8
# obligation for the second Arrive fails and the machine's completion order confirms the overrun:
# arrive #1 reuses the only slot before await #0 released it (T = 1, K = 1).
from verifier.lang import *


@proc
def overrun(T: size, K: size, y: f32[T, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, T):
            bar: barrier @ CudaMbarrier
            for k in seq(0, K):
                Arrive(cuda_in_order) >> bar
                Arrive(cuda_in_order) >> bar
                Await(bar, cuda_in_order, ~0)
                Await(bar, cuda_in_order, ~0)
            for l in cuda_threads(0, 32):
                y[task, l] = 0.0
