from verifier.lang import *
@proc
def k(n: size, x: f32[n] @ CudaGmemLinear)
    pass
