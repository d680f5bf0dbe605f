# expect: mbar_sides_warp_arrives_warpgroup_awaits proved
# COLL-5.14 (the distributed-memory rule of upstream dev26): sporkbench's ping-pong shape. Each
# producer warp p fills its slot and arrives on full[p] (p over warps, thread pitch 32); consumer
# warpgroup p awaits full[p] (p over warpgroups, pitch 128) and releases empty[p]. The Arrive and
# Await sides of each mbarrier are deduced apart, so the pitches may differ; camspork_jit's one
# deduction for every use rejected this ("p.thread_pitch (32) != p.thread_pitch (128)").
from verifier.lang import *


@proc
def mbar_sides_warp_arrives_warpgroup_awaits(K: size, x: f32[K, 2, 32] @ CudaGmemLinear,
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
                            buf[p, t] = x[k, p, t]
                        Arrive(cuda_in_order) >> full[p]
                with CudaWarps(name="consumer"):
                    for p in cuda_threads(0, 2, unit=cuda_warpgroup):
                        Await(full[p], cuda_in_order, ~0)
                        for t in cuda_threads(0, 128):
                            y[k, p, t] = buf[p, t % 32]
                        Arrive(cuda_in_order) >> empty[p]
            Fence(cuda_in_order, cuda_in_order)
