# expect: cross_hang unsupported ERR-V11
# A hang that a per-Await choice of schedule would pass: DIAL-11 needs ONE schedule for every
# Await. Warp 1 awaits `a` (line 23) before it arrives on `b` (line 24); warp 0 awaits `b`
# (line 26) before it arrives on `a` (line 27): each warp waits for the other forever. The
# sequential trace (warp 0's iteration first) satisfies the Await on `a` but not the one on
# `b`; the lockstep schedule (both iterations statement by statement) satisfies the Await on
# `b` but not the one on `a`. The concrete machine (`--sizes`) refutes it at the first Await the
# sequential trace leaves unsatisfied (deadlock on b, line 26: tests/test_dial11.py); the Z3
# encoding counts no barrier site in a thread loop that does not index it (COLL-5.9), so the
# proof is `unsupported` (line 21). In that fragment a multicast Arrive is reached by every CTA
# of its group at one statement, and we know of no program whose Awaits the sequential trace
# satisfies and lockstep does not.
from verifier.lang import *

@proc
def cross_hang():
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, 1):
            a: barrier[1 @ ring_buffer_by(1)] @ CudaMbarrier
            b: barrier[1 @ ring_buffer_by(1)] @ CudaMbarrier
            for w in cuda_threads(0, 2, unit=cuda_warp):
                if w == 1:
                    Await(a[0], cuda_in_order, 0)
                    Arrive(cuda_in_order, 1) >> b[0]
                if w == 0:
                    Await(b[0], cuda_in_order, 0)
                    Arrive(cuda_in_order, 1) >> a[0]
