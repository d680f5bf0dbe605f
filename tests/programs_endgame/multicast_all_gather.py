# expect: all_gather proved
# An all-gather of arrives (DIAL-11): each CTA of a 4-CTA cluster multicasts one Arrive to the
# element of every CTA, then awaits its own. In the sequential trace CTA 0's Await comes before
# the Arrives of CTAs 1..3, but the lockstep schedule (sibling CTA iterations statement by
# statement) satisfies every Await, so no execution hangs.
from verifier.lang import *

@proc
def all_gather():
    with CudaDeviceFunction(clusterDim=4, blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[4, 1 @ ring_buffer_by(1)] @ CudaMbarrier
            for c in cuda_threads(0, 4, unit=cuda_cta_in_cluster):
                Arrive(cuda_in_order, 1) >> bar[c, 0] >> bar[:, 0]
                Await(bar[c, 0], cuda_in_order, 0)
