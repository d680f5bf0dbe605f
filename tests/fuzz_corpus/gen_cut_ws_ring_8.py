# expect: ws_ring proved
# Warp-specialized producer/consumer through an R = 3 slot SMEM ring (semantics.md Example S7,
# one ring per task). Warp 0 produces, warp 1 consumes; `full` and `empty` guard each other
# (empty: barrier(full)). Producer iteration k: Await(empty, cuda_temporal, ~R) -- the first R
# awaits are skips, await #k pairs with consumer arrive #(k - R), whose reads of slot k % R it
# orders before the overwrite (WAR needs only temp) -- then writes slot k % R and arrives on
# `full`. Consumer iteration k: Await(full, cuda_in_order, ~0) pairs with producer arrive #k and
# grants full visibility (RAW), reads the slot reversed (lane l reads what lane 31 - l wrote),
# then arrives on `empty`. Ring depth = lag(full) + lag(empty) = 0 + R = 3 mbarriers each.
# At the end full and empty have a = w = K (the last R empty arrives are never awaited); the
# CTA fence orders every access of buf and of the mbarrier storage before the frees.
from verifier.lang import *

R = 3


@proc
def ws_ring(T: size, K: size, inp: f32[T, K, 32] @ CudaGmemLinear, y: f32[T, K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, T):
            buf: f32[R, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~R)
                    for l in cuda_threads(0, 32):
                        