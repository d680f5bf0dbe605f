"""Kernels the codegen tests hand-certify (a Certificate with the proc's own IR hash): constructs
codegen lowers before the verifier supports them (cluster sync, mbarrier rings in a cluster),
constructs codegen refuses whatever the proof (an mbarrier element arrived on by different
warps, which per-thread ring state cannot follow and which the static rule LANG-5.12 now rejects
as well, ERR-A24), and a register tile that distributed-memory deduction rejects. Load with
`load_procs`, not `import`."""

from verifier.lang import *


@proc
def mbarrier_cluster(nb: size, x: f32[nb, 2, 32] @ CudaGmemLinear, y: f32[nb, 2, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32, clusterDim=2):
        for blk in cuda_tasks(0, nb):
            s: f32[2, 32] @ CudaSmemLinear
            bar: barrier[2] @ CudaMbarrier
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 32):
                    s[c, t] = x[blk, c, t]
                Arrive(cuda_in_order) >> bar[c]
                Await(bar[c], cuda_in_order, ~0)
                for t in cuda_threads(0, 32):
                    y[blk, c, t] = s[c, 31 - t]
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


@proc
def mbarrier_two_elements(nb: size, x: f32[nb, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=96):
        for blk in cuda_tasks(0, nb):
            bar: barrier[2] @ CudaMbarrier
            with CudaWarps(0, 2):
                for w in cuda_threads(0, 2, unit=cuda_warp):
                    Arrive(cuda_in_order) >> bar[w]
                    Await(bar[w], cuda_in_order, ~0)
            with CudaWarps(1, 3):
                for w in cuda_threads(0, 2, unit=cuda_warp):
                    Arrive(cuda_in_order) >> bar[w]
                    Await(bar[w], cuda_in_order, ~0)
            Fence(cuda_in_order, cuda_in_order)
