# expect: mbar_sides_cta_index_swapped rejected ERR-A23
# COLL-5.14, spork-verify's tie of the two sides: full[c, w] is arrived on with c over the CTAs
# of the cluster (pitch 64 = blockDim) and w over warps, awaited as full[b, a] with b over warps
# and a over CTAs. Each side is consistent, and each guard pair too (upstream dev26 accepts it),
# but index 0 would place the element in CTA c for the Arrives and in the awaiting thread's own
# CTA for the Awaits: the lowering could not put one mbarrier behind both.
from verifier.lang import *


@proc
def mbar_sides_cta_index_swapped(K: size, y: f32[K, 2, 2, 64] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64, clusterDim=2):
        for task in cuda_tasks(0, 1):
            full: barrier[2, 2] @ CudaMbarrier
            empty: barrier(full)[2, 2] @ CudaMbarrier
            for k in seq(0, K):
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for w in cuda_threads(0, 2, unit=cuda_warp):
                        Await(empty[c, w], cuda_in_order, ~1)
                        for t in cuda_threads(0, 32):
                            y[k, c, w, t] = 1.0
                        Arrive(cuda_in_order) >> full[c, w]
                for a in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for b in cuda_threads(0, 2, unit=cuda_warp):
                        Await(full[b, a], cuda_in_order, ~0)
                        Arrive(cuda_in_order) >> empty[b, a]
