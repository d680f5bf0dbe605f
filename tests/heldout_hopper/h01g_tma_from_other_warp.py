# expect: h01g_tma_from_other_warp refuted WAR A_s 25
# Seeded bug: warp 1 issues the TMA while warp 0 does the empty wait and the Arrive on raw.
# First prediction: ERR-A32 (LANG-5.18, "between the thread's Await and Arrive"). The spec
# sides with the tool: the alternation and placement analysis is syntactic over the statement
# list with `with` bodies inlined (LANG-5.17), where the TMA does sit between the two, so the
# static rules pass. The machine then decides: warp 1 never waits on war, so its refill of slot
# 0 at k = 3 lacks temp on the consumer's reads (SEM-6.4 grants temp only to the awaiting
# warp 0): WAR HAZARD @ A_s at the TMA (SEM-4.5), replayed, K = 4. A real race on the GPU.
from verifier.lang import *


@proc
def h01g_tma_from_other_warp(T: size, K: size, A: f32[64 * T, 32 * K] @ CudaGmemLinear,
                               y: f32[T, K, 64, 32] @ CudaGmemLinear):
    A_map = A[:, :] @ Sm90_tensorMap(128, 64, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            A_s: f32[3, 64, 32] @ Sm90_SmemSwizzled(128)
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~3)
                with CudaWarps(1, 2):
                    Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[k % 3, :, :], A_map[64 * task:64 * task + 64, 32 * k:32 * k + 32], size0=64, size1=32) >> raw
                with CudaWarps(0, 1):
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    Await(raw, cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        for j in seq(0, 16):
                            y[task, k, t / 2, 16 * (t % 2) + j] = A_s[k % 3, t / 2, 16 * (t % 2) + j] * 2.0
                    Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
