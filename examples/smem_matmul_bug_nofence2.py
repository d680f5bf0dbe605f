# expect: smem_matmul_bug_nofence2 refuted WAR A_s 26
# Second fence removed from the k-tile loop (hoisted after the loop, where it still orders the last
# reads before the free of A_s/B_s): in k-tile kt = 1 (K = 32), thread (0, 0) overwrites A_s[0, 0],
# which the threads (0, tx) read in k-tile 0 with no fence since. A_s is stored before B_s, so the
# A_s store fails first.
from verifier.lang import *


@proc
def smem_matmul_bug_nofence2(M: size, N: size, K: size, A: f32[M, K] @ CudaGmemLinear, B: f32[K, N] @ CudaGmemLinear, C: f32[M, N] @ CudaGmemLinear):
    assert M % 16 == 0
    assert N % 16 == 0
    assert K % 16 == 0
    with CudaDeviceFunction(blockDim=256):
        for mt in cuda_tasks(0, M / 16):
            for nt in cuda_tasks(0, N / 16):
                A_s: f32[16, 16] @ CudaSmemLinear
                B_s: f32[16, 16] @ CudaSmemLinear
                acc: f32[16, 16] @ CudaRmem
                for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                    for tx in cuda_threads(0, 16, unit=cuda_thread):
                        acc[ty, tx] = 0.0
                for kt in seq(0, K / 16):
                    for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                        for tx in cuda_threads(0, 16, unit=cuda_thread):
                            A_s[ty, tx] = A[16 * mt + ty, 16 * kt + tx]
                            B_s[ty, tx] = B[16 * kt + ty, 16 * nt + tx]
                    Fence(cuda_in_order, cuda_in_order)
                    for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                        for tx in cuda_threads(0, 16, unit=cuda_thread):
                            for k in seq(0, 16):
                                acc[ty, tx] += A_s[ty, k] * B_s[k, tx]
                Fence(cuda_in_order, cuda_in_order)
                for ty in cuda_threads(0, 16, unit=16 * cuda_thread):
                    for tx in cuda_threads(0, 16, unit=cuda_thread):
                        C[16 * mt + ty, 16 * nt + tx] = acc[ty, tx]
