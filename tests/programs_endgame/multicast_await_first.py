# expect: await_first refuted deadlock bar 15
# Two CTAs that each await, then arrive for, the other: every CTA's Await (line 15) needs the
# multicast Arrive of both CTAs (line 16), which each CTA reaches only after its own Await, so
# both wait forever. Endgame's sync-check keeps the Await pending until the Arrives come later
# in its trace and passes it; no schedule that keeps each CTA's program order satisfies the
# Await, so the sequential trace and the lockstep schedule both refute it (DIAL-11).
from verifier.lang import *

@proc
def await_first():
    with CudaDeviceFunction(clusterDim=2, blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[2, 1 @ ring_buffer_by(1)] @ CudaMbarrier
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                Await(bar[c, 0], cuda_in_order, 0)
                Arrive(cuda_in_order, 1) >> bar[c, 0] >> bar[:, 0]
