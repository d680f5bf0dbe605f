# expect: double_buffer proved
# semantics.md Example S6: double-buffered cp.async with cp.async.wait_group 1. Each thread t
# streams K chunks of 4 floats (chunk k = g[128 * task + t, 4k : 4k + 4]) through two SMEM slots.
# Chunk j is committed by arrive #j (the prologue commits chunk 0); in iteration k, after the
# Arrive a = k + 2, so Await(..., 1) retires arrives <= k: chunk k is visible to thread t while
# chunk k + 1 stays in flight. The cp.async of iteration k overwrites slot (k + 1) % 2, whose
# previous copy was retired and whose read was by the same thread in order (temp on cuda2):
# the write-only mutate (X = {Sm80, cuda2}) passes. The `if` keeps the g window in bounds; the
# Arrive runs unconditionally (an empty group in the last iteration). After the loop a = K + 1,
# w = K; the final Await(..., 0) balances the counts, the CTA fence covers the free of `s`.
# `assert K >= 1`: the prologue copies chunk 0 unconditionally (g has 4 * K columns).
from verifier.lang import *


@proc
def double_buffer(M: size, K: size, g: f32[M, 4 * K] @ CudaGmemLinear, y: f32[M, K] @ CudaGmemLinear):
    assert M % 128 == 0
    assert K >= 1
    with CudaDeviceFunction(blockDim=128):
        for task in cuda