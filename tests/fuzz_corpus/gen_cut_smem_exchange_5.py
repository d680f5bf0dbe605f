# expect: smem_exchange proved
# language.md Example L1: reverse a 256-element block through shared memory.
# Fence 1 makes the writes of `tile` visible to every thread of the CTA (RAW);
# Fence 2 orders the reads of `tile` before its free at the end of the task (WAR on free).
from verifier.lang import *


@proc
def smem_exchange(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256