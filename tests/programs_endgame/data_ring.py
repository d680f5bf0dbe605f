# expect: data_ring unsupported ERR-V11
# A managed ring buffer of data (`f32[2, K @ ring_buffer_by(4), 16]`): endgame's ring-buffered
# SMEM is outside spork-verify's fragment (DIAL-9), reported at its line.
from verifier.lang import *


@proc
def data_ring(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            smem: f32[2, K @ ring_buffer_by(4), 16] @ CudaSmemLinear
            for t in cuda_threads(0, 16):
                smem[0, 0, t] = 1.0
