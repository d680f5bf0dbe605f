# expect: mbar_sides_rotating_producer proved
# Choice E6 (specs/verification.md): as mbar_sides_warp_arrives_warpgroup_awaits, but producer
# warp p writes its slot rotated by k, so the writes of rounds k and k + 1 to one element come
# from different lanes: only the chain through consumer warpgroup p (full[p], then empty[p])
# orders them, and the producer's lanes do not determine the consumer's iterator p; the
# quantified witnesses bind it (without E6 the WAW on buf was an unreproduced candidate).
from verifier.lang import *


@proc
def mbar_sides_rotating_producer(K: size, x: f32[K, 2, 32] @ CudaGmemLinear,
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
                        for t in cuda_threads(0, 128):
                            y[k, p, t] = buf[p, t % 32]
                        Arrive(cuda_in_order) >> empty[p]
            Fence(cuda_in_order, cuda_in_order)
