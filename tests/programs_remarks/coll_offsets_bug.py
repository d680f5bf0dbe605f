# expect: coll_offsets_bug rejected ERR-A23
# A register array written by threads 0..63 as vals[t / 4, t % 4] and read back by the threads of
# warps 1..2, whose thread index starts at 32: the same element names two different owners, so
# distributed memory deduction fails (COLL-5) at the read.
from verifier.lang import *


@proc
def coll_offsets_bug():
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 1):
            vals: f32[16, 4] @ CudaRmem
            for m in cuda_threads(0, 16, unit=4 * cuda_thread):
                for n in cuda_threads(0, 4, unit=cuda_thread):
                    vals[m, n] = 0
            with CudaWarps(1, 3):
                for m in cuda_threads(0, 16, unit=4 * cuda_thread):
                    for n in cuda_threads(0, 4, unit=cuda_thread):
                        r: f32 @ CudaRmem
                        r = vals[m, n]
