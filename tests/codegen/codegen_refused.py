"""Kernels that codegen must refuse even when handed a certificate that matches their IR
(the tests build such certificates by hand): constructs without a lowering, and a register
tile that distributed-memory deduction rejects."""

from verifier.lang import *


@proc
def commit_group(nb: size, x: f32[nb, 128] @ CudaGmemLinear, y: f32[nb, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for blk in cuda_tasks(0, nb):
            s: f32[128] @ CudaSmemLinear
            cg: barrier @ CudaCommitGroup
            for t in cuda_threads(0, 32):
                Sm80_cp_async_f32(s[4 * t:4 * t + 4], x[blk, 4 * t:4 * t + 4], size=4)
                Arrive(Sm80_cp_async) >> cg
                Await(cg, cuda_in_order, 0)
                for j in seq(0, 4):
                    y[blk, 4 * t + j] = s[4 * t + j]


@proc
def reversed_registers(nb: size, x: f32[nb, 256] @ CudaGmemLinear, y: f32[nb, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            r: f32[256] @ CudaRmem
            for t in cuda_threads(0, 256):
                r[255 - t] = x[blk, t]
            for t in cuda_threads(0, 256):
                y[blk, t] = r[255 - t]
