# expect: block_reduce proved
# Block sum reduction of 256 elements per task in shared memory: after the load, levels with
# strides 128, 64, ..., 1 each halve the active threads 