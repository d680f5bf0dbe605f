# expect: saxpy proved
# y = a * x + y, one element per thread, 256 threads per task; no shared memory, no f