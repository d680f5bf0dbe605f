# expect: arrive_own_cta proved
# expect: arrive_other_ctas rejected ERR-L04
# An Sm80_cp_async Arrive may not multicast (LANG-5.20): `bar[0:1]` in a 1x1 cluster names
# only the arriving CTA, so it is not multicast; `bar[0:2]` in a 2-CTA cluster is.
from __future__ import annotations

from exo import *
from exo.platforms.cuda import *
from exo.platforms.Sm80 import *


def make(cluster: int):
    @proc
    def p():
        with CudaDeviceFunction(clusterDim=cluster, blockDim=32):
            for task in cuda_tasks(0, 1):
                bar: barrier[cluster] @ CudaMbarrier
                for cta in cuda_threads(0, cluster, unit=cuda_cta_in_cluster):
                    Arrive(Sm80_cp_async, 1) >> bar[cta] >> bar[0:cluster]
                    Await(bar[cta], cuda_in_order, ~0)
    return p


arrive_own_cta = rename(make(1), "arrive_own_cta")
arrive_other_ctas = rename(make(2), "arrive_other_ctas")
