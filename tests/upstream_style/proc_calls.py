# expect: wrapper proved
# expect: wrapper_rows proved
# expect: wrapper_bug_alias refuted RAW d_x 25
# expect: wrapper_bug_oob refuted out-of-bounds d_y 26
# expect: wrapper_bug_missing_assert unsupported
# expect: wrapper_bug_memory rejected ERR-A07
# expect: shift refuted out-of-bounds dst 92
# expect: wrapper_bug_window unknown
# CALL-1..4 (specs/upstream_api.md): a CPU proc calls an ordinary proc (the kernel) as
# upstream's test apps do; the call is verified as the callee's body on the caller's windows.
# Aliasing two arguments, or a window that runs off the buffer, is found in the callee's body.
from __future__ import annotations

from exo import *
from exo.platforms.cuda import *


@proc
def reverse(n: size, src: f32[n] @ CudaGmemLinear, dst: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0 and n > 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                v: f32 @ CudaRmem
                v = src[n - 1 - (256 * blk + t)]
                dst[256 * blk + t] = v


@proc
def wrapper(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 512 == 0
    d_x: f32[n] @ CudaGmemLinear
    d_y: f32[n] @ CudaGmemLinear
    cudaMemcpyAsync_htod_1f32(n, d_x[:], x[:])
    reverse(n, d_x, d_y)
    cudaMemcpyAsync_dtoh_1f32(n, y[:], d_y[:])


@proc
def wrapper_rows(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 256 == 0
    d_2: f32[2, n + 4] @ CudaGmemLinear
    cudaMemcpyAsync_htod_1f32(n, d_2[0, 4:n + 4], x[:])
    reverse(n, d_2[0, 4:n + 4], d_2[1, 0:n])
    reverse(n, d_2[1, 0:n], d_2[0, 2:n + 2])
    cudaMemcpyAsync_dtoh_1f32(n, y[:], d_2[0, 2:n + 2])


@proc
def wrapper_bug_alias(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 256 == 0
    d_x: f32[n] @ CudaGmemLinear
    cudaMemcpyAsync_htod_1f32(n, d_x[:], x[:])
    reverse(n, d_x, d_x)
    cudaMemcpyAsync_dtoh_1f32(n, y[:], d_x[:])


@proc
def wrapper_bug_oob(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 256 == 0
    d_y: f32[n + 4] @ CudaGmemLinear
    d_x: f32[n] @ CudaGmemLinear
    cudaMemcpyAsync_htod_1f32(n, d_x[:], x[:])
    reverse(n, d_x, d_y[8:n + 8])


@proc
def wrapper_bug_missing_assert(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    d_x: f32[n] @ CudaGmemLinear
    d_y: f32[n] @ CudaGmemLinear
    cudaMemcpyAsync_htod_1f32(n, d_x[:], x[:])
    reverse(n, d_x, d_y)


@proc
def wrapper_bug_memory(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 256 == 0
    reverse(n, x, y)


# A callee that writes one element past its own parameter: inlined on a window of a larger
# buffer, the write stays inside the buffer, so only the callee's own proof bounds it by the
# window (CALL-2); the caller is unknown, never proved.
@proc
def shift(n: size, src: f32[n] @ CudaGmemLinear, dst: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0 and n > 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                v: f32 @ CudaRmem
                v = src[256 * blk + t]
                dst[256 * blk + t + 1] = v


@proc
def wrapper_bug_window(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 256 == 0
    d_x: f32[n] @ CudaGmemLinear
    d_y: f32[n + 4] @ CudaGmemLinear
    cudaMemcpyAsync_htod_1f32(n, d_x[:], x[:])
    shift(n, d_x, d_y[0:n])
    cudaMemcpyAsync_dtoh_1f32(n, y[:], d_y[0:n])
