# expect: data_ring rejected ERR-A16
# A managed ring buffer of data (`f32[2, K @ ring_buffer_by(4), 16]`) without
# `.ring_guarded_by(...)`: upstream's "managed ring buffer missing .ring_guarded_by" (DIAL-18),
# at its line.
from verifier.lang import *


@proc
def data_ring(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            smem: f32[2, K @ ring_buffer_by(4), 16] @ CudaSmemLinear
            for t in cuda_threads(0, 16):
                smem[0, 0, t] = 1.0
