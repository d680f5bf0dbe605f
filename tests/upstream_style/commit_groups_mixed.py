# expect: sm80_and_wgmma_groups proved
# expect: two_sm80_groups rejected ERR-A17
# expect: one_sm80_group proved
# LANG-5.21: a commit group's lowered type is set by its Arrive's first sync-tl, so an Sm80
# commit group and a wgmma one may be live together (upstream accepts it, and both are
# modelled: SEM-8.4), while two Sm80 commit groups clash.
from __future__ import annotations

from exo import *
from exo.platforms.cuda import *
from exo.platforms.Sm80 import *
from exo.platforms.Sm90 import *


def make(unit_a, first_a, second_a):
    @proc
    def p():
        with CudaDeviceFunction(blockDim=128):
            for task in cuda_tasks(0, 1):
                barrier_a: barrier[1] @ CudaCommitGroup
                barrier_b: barrier[1] @ CudaCommitGroup
                for a in cuda_threads(0, 1, unit=unit_a):
                    Arrive(first_a, 1) >> barrier_a[a]
                for b in cuda_threads(0, 1, unit=cuda_thread):
                    Arrive(Sm80_cp_async, 1) >> barrier_b[b]
                for a in cuda_threads(0, 1, unit=unit_a):
                    Await(barrier_a[a], second_a, 0)
                for b in cuda_threads(0, 1, unit=cuda_thread):
                    Await(barrier_b[b], cuda_in_order, 0)
    return p


@proc
def one_sm80_group():
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 1):
            cg: barrier[128] @ CudaCommitGroup
            for t in cuda_threads(0, 128):
                Arrive(Sm80_cp_async, 1) >> cg[t]
                Await(cg[t], cuda_in_order, 0)


sm80_and_wgmma_groups = rename(
    make(cuda_warpgroup, wgmma_async, cuda_generic_and_async_proxy), "sm80_and_wgmma_groups")
two_sm80_groups = rename(make(cuda_thread, Sm80_cp_async, cuda_in_order),
                         "two_sm80_groups")
