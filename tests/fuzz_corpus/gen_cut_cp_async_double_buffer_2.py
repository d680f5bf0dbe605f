# expect: double_buffer proved
# semantics.md Example S6: double-buffered cp.async with cp.async.wait_group 1. Each thread t
# streams K chunks of 4 floats (chunk k = g[128 * task + t, 4k : 4k + 4]) through two SMEM slots.
# Chunk j is committed by arrive #j (the prologue commits chunk 0); in iteration k, after the
# Arrive a = k + 2, so Await(..., 1) retires arrives <= k: chunk k is visible to thread 