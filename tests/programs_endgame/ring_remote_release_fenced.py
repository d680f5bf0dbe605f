# expect: ring_remote_release_fenced proved
# Two CTAs of a cluster without the kernel's exit cluster barrier
# (`unsafe_no_shutdown_cluster_sync=True`, specs/codegen.md CG-X1) multicast in-order Arrives
# on a ring of depth 1; the Arrives on bar[:, 1] recycle the slot and nobody awaits them. Such a
# ring keeps its free check (DIAL-21): the final cluster Fence orders every remote arrive
# before either CTA can exit, as upstream's co-op schedule does.
from verifier.lang import *


@proc
def ring_remote_release_fenced():
    with CudaDeviceFunction(clusterDim=2, blockDim=32, unsafe_no_shutdown_cluster_sync=True):
        for task in cuda_tasks(0, 1):
            bar: barrier[2, 2 @ ring_buffer_by(1)] @ CudaMbarrier
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                Arrive(cuda_in_order, 1) >> bar[c, 0] >> bar[:, 0]
                Await(bar[c, 0], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                Arrive(cuda_in_order, 1) >> bar[c, 1] >> bar[:, 1]
            Fence(cuda_in_order, cuda_in_order)
