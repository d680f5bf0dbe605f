# expect: saxpy proved
# y = a * x + y, one element per thread, 256 threads per task; no shared memory, no fences.
from verifier.lang import *


@proc
def saxpy(n: size, a: f32 @ CudaGridConstant, x: f32[n] @ CudaGme