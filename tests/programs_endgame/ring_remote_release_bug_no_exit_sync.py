# expect: ring_remote_release_bug_no_exit_sync refuted WAW bar 13
# ring_remote_release_fenced.py without its final cluster Fence: CTA 1's remote Arrive on
# bar[0, 1] may still be on its way into CTA 0's shared memory when CTA 0 exits, since
# `unsafe_no_shutdown_cluster_sync=True` drops the exit cluster barrier (CG-X1). Proved before
# DIAL-21 (DIAL-12 exempted the in-order ring's free); refuted at `bar`'s free now.
from verifier.lang import *


@proc
def ring_remote_release_bug_no_exit_sync():
    with CudaDeviceFunction(clusterDim=2, blockDim=32, unsafe_no_shutdown_cluster_sync=True):
        for task in cuda_tasks(0, 1):
            bar: barrier[2, 2 @ ring_buffer_by(1)] @ CudaMbarrier
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                Arrive(cuda_in_order, 1) >> bar[c, 0] >> bar[:, 0]
                Await(bar[c, 0], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                Arrive(cuda_in_order, 1) >> bar[c, 1] >> bar[:, 1]
