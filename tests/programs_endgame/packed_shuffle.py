# expect: packed_vec_add proved
# expect: pair_sum proved
# Endgame's packed 32-bit register copies and its warp shuffle, written directly (upstream's
# test_cu_f16.py and test_simple_cuda.py reach them through `replace` and a gemv): each thread
# loads two f16 of x and y with one `cuda_packed32_load` each, adds them and stores the pair
# with `cuda_packed32_store`, the first task's threads also by the 16-byte vector store; pairs
# of lanes one apart add their partial sums with `cuda_shfl_xor_sync_sum_1f32`. Proved for every
# N (specs/codegen.md CG-I1, CG-I2 lower them).
from verifier.lang import *


@proc
def packed_vec_add(N: size, x: f16[N] @ CudaGmemLinear, y: f16[N] @ CudaGmemLinear,
                   out: f16[N] @ CudaGmemLinear, out8: f16[2048] @ CudaGmemLinear):
    assert N % 512 == 0
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, N / 512):
            for tid in cuda_threads(0, 256):
                rx: f16[2] @ CudaRmemPacked32
                ry: f16[2] @ CudaRmemPacked32
                cuda_packed32_load(rx[:], x[512 * task + 2 * tid:512 * task + 2 * tid + 2],
                                   dst=f16, src=f16, pack=2)
                cuda_packed32_load(ry[:], y[512 * task + 2 * tid:512 * task + 2 * tid + 2],
                                   dst=f16, src=f16, pack=2)
                for i in seq(0, 2):
                    rx[i] += ry[i]
                cuda_packed32_store(out[512 * task + 2 * tid:512 * task + 2 * tid + 2], rx[:],
                                    dst=f16, src=f16, pack=2)
                if task == 0:
                    r8: f16[4, 2] @ CudaRmemPacked32
                    for i in seq(0, 4):
                        for j in seq(0, 2):
                            r8[i, j] = rx[j]
                    cuda_packed32_storev_16b(out8[8 * tid:8 * tid + 8], r8[:, :], dst=f16,
                                             src=f16, v=4, mem="global")


@proc
def pair_sum(M: size, A: f32[M, 2] @ CudaGmemLinear, s: f32[M] @ CudaGmemLinear):
    assert M % 16 == 0
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, M / 16):
            for m in cuda_threads(0, 16, unit=2 * cuda_thread):
                part: f32[2] @ CudaRmem
                total: f32[2] @ CudaRmem
                for k in cuda_threads(0, 2, unit=cuda_thread):
                    part[k] = A[16 * task + m, k]
                cuda_shfl_xor_sync_sum_1f32(total[:], part[:], laneMask=1)
                for k in cuda_threads(0, 2, unit=cuda_thread):
                    if k == 0:
                        s[16 * task + m] = total[k]
