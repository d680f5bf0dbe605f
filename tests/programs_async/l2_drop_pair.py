# expect: l2_drop_pair refuted RAW stage 19
# language.md L2 with the Arrive/Await pair (and cg) dropped. The CTA fence (cuda_in_order) does
# not witness the cp.async records (Sm80 is not in its full set), so thread 0 reads stage[0]
# (copied by thread 0 itself: an asynchronous write is visible to nobody, not even its issuer)
# -> RAW HAZARD @ stage[0]; counterexample n = 1.
from verifier.lang import *


@proc
def l2_drop_pair(n: size, src: f32[n, 128] @ CudaGmemLinear, dst: f32[n, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for row in cuda_tasks(0, n):
            stage: f32[128] @ CudaSmemLinear
            for t in cuda_threads(0, 32):
                Sm80_cp_async_f32(stage[4 * t : 4 * t + 4], src[row, 4 * t : 4 * t + 4], size=4)
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 32):
                for j in seq(0, 4):
                    dst[row, 32 * j + t] = stage[32 * j + t]
            Fence(cuda_in_order, cuda_in_order)
