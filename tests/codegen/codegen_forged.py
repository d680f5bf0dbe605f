"""Kernels the codegen tests hand-certify (a Certificate with the proc's own IR hash) because
the verifier does not prove them: constructs codegen lowers before the verifier supports them
(cluster sync), constructs codegen refuses (mbarrier rings), and a register tile that
distributed-memory deduction rejects. Load with `load_procs`, not `import`."""

from verifier.lang import *


@proc
def mbarrier_ring(T: size, K: size, inp: f32[T, K, 32] @ CudaGmemLinear, y: f32[T, K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, T):
            buf: f32[3, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~3)
                    for l in cuda_threads(0, 32):
                        buf[k % 3, l] = inp[task, k, l]
                    Arrive(cuda_in_order) >> full
                with CudaWarps(1, 2):
                    Await(full, cuda_in_order, ~0)
                    for l in cuda_threads(0, 32):
                        y[task, k, l] = buf[k % 3, 31 - l]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)


@proc
def reversed_registers(nb: size, x: f32[nb, 256] @ CudaGmemLinear, y: f32[nb, 256] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            r: f32[256] @ CudaRmem
            for t in cuda_threads(0, 256):
                r[255 - t] = x[blk, t]
            for t in cuda_threads(0, 256):
                y[blk, t] = r[255 - t]


@proc
def cluster_sync(nb: size, x: f32[nb, 2, 128] @ CudaGmemLinear, y: f32[nb, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128, clusterDim=2):
        for blk in cuda_tasks(0, nb):
            s: f32[2, 128] @ CudaSmemLinear
            cs: barrier @ CudaClusterSync
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    s[c, t] = x[blk, c, t]
            Arrive(cuda_in_order) >> cs
            Await(cs, cuda_in_order, 0)
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    y[blk, c, t] = s[c, 127 - t]
            Fence(cuda_in_order, cuda_in_order)
