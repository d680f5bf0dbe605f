# expect: cycle3_bug_duplicate_await refuted RAW CtoA 41
# test: slow
# cycle3 with A's Awaits and Arrives after the first iteration run by warp 1 instead of warp 0:
# threads 32..33 await CtoA[tid, D], whose slot handoff (the Await on CtoA[tid, 0]) only threads
# 0..1 saw (upstream's wrong_duplicate_await).
from verifier.lang import *

A_DELAY, B_DELAY, C_DELAY = 1, 2, 3
DEPTH = A_DELAY + B_DELAY + C_DELAY
warp_config = [CudaWarpConfig("A", 2), CudaWarpConfig("B", 2), CudaWarpConfig("C", 8)]


@proc
def cycle3_bug_duplicate_await(N: size):
    assert N >= 1
    with CudaDeviceFunction(warp_config=warp_config):
        for task in cuda_tasks(0, 1):
            AtoB: barrier[2, (N + B_DELAY) @ ring_buffer_by(DEPTH)] @ CudaMbarrierPreArrive(B_DELAY)
            BtoC: barrier[2, (N + C_DELAY) @ ring_buffer_by(DEPTH)] @ CudaMbarrierPreArrive(C_DELAY)
            CtoA: barrier[2, (N + A_DELAY) @ ring_buffer_by(DEPTH)] @ CudaMbarrierPreArrive(A_DELAY)
            for n in seq(0, N):
                with CudaWarps(name="B"):
                    for w in cuda_threads(0, 2, unit=cuda_warp):
                        Await(AtoB[w, n], cuda_in_order, 0)
                        Arrive(cuda_in_order) >> BtoC[w, n + C_DELAY]
                with CudaWarps(name="C"):
                    for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                        with CudaWarps(2, 4):
                            Await(BtoC[wg, n], cuda_in_order, 0)
                    for wg in cuda_threads(0, 2, unit=cuda_warpgroup):
                        with CudaWarps(2, 4):
                            Arrive(cuda_in_order) >> CtoA[wg, n + A_DELAY]
                with CudaWarps(name="A"):
                    if n == 0:
                        for tid in cuda_threads(0, 2, unit=cuda_thread):
                            Await(CtoA[tid, n], cuda_in_order, 0)
                            Arrive(cuda_in_order) >> AtoB[tid, n + B_DELAY]
                    else:
                        with CudaWarps(1, 2):
                            for tid in cuda_threads(0, 2, unit=cuda_thread):
                                Await(CtoA[tid, n], cuda_in_order, 0)
                                Arrive(cuda_in_order) >> AtoB[tid, n + B_DELAY]
            Fence(cuda_in_order, cuda_in_order)
