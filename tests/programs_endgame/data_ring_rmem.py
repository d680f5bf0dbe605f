# expect: data_ring_rmem unsupported ERR-V11
# A managed ring buffer of registers: spork-verify models data rings in shared memory only
# (DIAL-18), so this one is unsupported, named at its line.
from verifier.lang import *


@proc
def data_ring_rmem(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[K @ ring_buffer_by(2)] @ CudaMbarrierPreArrive(2)
            regs: f32[K @ ring_buffer_by(2), 32].ring_guarded_by(bar) @ CudaRmem
            for k in seq(0, K):
                Await(bar[k], cuda_in_order, 0)
                for t in cuda_threads(0, 32):
                    regs[k, t] = 1.0
                Arrive(cuda_in_order) >> bar[k + 2]
