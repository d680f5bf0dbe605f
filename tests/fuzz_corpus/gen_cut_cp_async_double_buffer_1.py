# expect: double_buffer proved
# semantics.md Example S6: double-buffered cp.async with cp.async.wait_group 1. Each thread t
# streams K chunks of 4 floats (chunk k = g[128 * task + t, 4k : 4k + 4]) thr