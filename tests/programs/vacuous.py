# Procs with nothing to prove: `vacuous` (exit 3), never `proved` (specs/verification.md VAC-1, VAC-2).
# expect: asserts_negative_size vacuous ERR-V12 - 13
# expect: asserts_contradict vacuous ERR-V12 - 23
# expect: reversed_bounds vacuous ERR-V12 - 34
# expect: empty_body vacuous ERR-V12 - 40
# expect: empty_for_allowed_sizes vacuous ERR-V12 - 48
# expect: one_instance_is_enough proved
from verifier.lang import *


@proc
def asserts_negative_size(n: size, x: f32[n] @ CudaGmemLinear):
    assert n < 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                x[256 * blk + t] = 0.0


@proc
def asserts_contradict(n: size, x: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    assert n == 1
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                x[256 * blk + t] = 0.0


@proc
def reversed_bounds(n: size, x: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(n / 256, 0):
            for t in cuda_threads(0, 256):
                x[256 * blk + t] = 0.0


@proc
def empty_body(n: size):
    pass


@proc
def empty_for_allowed_sizes(n: size, x: f32[n] @ CudaGmemLinear):
    assert n < 256
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                x[256 * blk + t] = 0.0


@proc
def one_instance_is_enough(n: size, x: f32[n] @ CudaGmemLinear):
    assert n == 256
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                x[256 * blk + t] = 0.0
