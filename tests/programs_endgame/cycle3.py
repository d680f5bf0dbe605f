# expect: cycle3 proved
# test: slow (about 11 s of CPU to prove, the longest proof of the bundled kernels)
# Upstream's tests/cuda/test_3cycle_mbarrier.py (endgame dialect) with the iteration count a size:
# three warp groups pass a token round a cycle of three ring mbarriers AtoB -> BtoC -> CtoA,
# each pre-arrived by its delay; ring depth A + B + C delays. Every slot's reuse is ordered
# through the whole cycle (DIAL-6, DIAL-7): proved for all N. February's guard syntax rejected
# such 3-cycles (ERR-A31).
from verifier.lang import *

A_DELAY, B_DELAY, C_DELAY = 1, 2, 3
DEPTH = A_DELAY + B_DELAY + C_DELAY
warp_config = [CudaWarpConfig("A", 2), CudaWarpConfig("B", 2), CudaWarpConfig("C", 8)]


@proc
def cycle3(N: size):
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
                        with CudaWarps(0, 1):
                            for tid in cuda_threads(0, 2, unit=cuda_thread):
                                Await(CtoA[tid, n], cuda_in_order, 0)
                                Arrive(cuda_in_order) >> AtoB[tid, n + B_DELAY]
            Fence(cuda_in_order, cuda_in_order)
