# expect: commit_group_name rejected ERR-L03
# A cp.async commit group declared as the wgmma one: the endgame name fixes the kind (DIAL-8).
from verifier.lang import *


@proc
def commit_group_name(src: f32[32, 4] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            smem: f32[32, 4] @ CudaSmemLinear
            for t in cuda_threads(0, 32):
                cg: barrier @ Sm90_WgmmaCommitGroup
                Sm80_cp_async_f32(smem[t, 0:4], src[t, 0:4], size=4)
                Arrive(Sm80_cp_async) >> cg
                Await(cg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
