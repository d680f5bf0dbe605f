# expect: mbar_sides_release_before_read refuted WAR buf 22
# Seeded bug of mbar_sides_rotating_producer: consumer warpgroup p releases empty[p] before it
# reads the slot, so producer warp p may overwrite buf[p, .] in round k + 1 while round k is
# still read: WAR at the producer's write, K = 2.
from verifier.lang import *


@proc
def mbar_sides_release_before_read(K: size, x: f32[K, 2, 32] @ CudaGmemLinear,
                                 y: f32[K, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(warp_config=[CudaWarpConfig("producer", 2),
                                         CudaWarpConfig("consumer", 8)]):
        for task in cuda_tasks(0, 1):
            buf: f32[2, 32] @ CudaSmemLinear
            full: barrier[2] @ CudaMbarrier
            empty: barrier(full)[2] @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(name="producer"):
                    for p in cuda_threads(0, 2, unit=cuda_warp):
                        Await(empty[p], cuda_in_order, ~1)
                        for t in cuda_threads(0, 32):
                            buf[p, (t + k) % 32] = x[k, p, t]
                        Arrive(cuda_in_order) >> full[p]
                with CudaWarps(name="consumer"):
                    for p in cuda_threads(0, 2, unit=cuda_warpgroup):
                        Await(full[p], cuda_in_order, ~0)
                        Arrive(cuda_in_order) >> empty[p]
                        for t in cuda_threads(0, 128):
                            y[k, p, t] = buf[p, t % 32]
            Fence(cuda_in_order, cuda_in_order)
