# expect: h10_named_roles_load_store proved
# spec: PROVED. Three named roles with setmaxnreg (LANG-4.12): a TMA warp and three idle
# warps (one warpgroup, dec 40) and a math warpgroup (inc 232). The TMA warp loads X by TMA,
# the math warpgroup waits with Await(raw, cuda_in_order, ~0) (cuda2 full on the TMA records,
# SEM-6.5), writes Y_s with ordinary stores and releases war; a CTA fence with second sync-tl
# cuda_generic_and_async_proxy (run by every role, LANG-8.4) hands Y_s to the TMA warp's store
# (SEM-3.4, SEM-8.1); the bulk group is waited before the exit fence and the frees (SEM-8.4).
from verifier.lang import *


@proc
def h10_named_roles_load_store(T: size, X: f32[T, 64, 32] @ CudaGmemLinear,
                               Y: f32[T, 64, 32] @ CudaGmemLinear):
    X_map = X[:, :, :] @ Sm90_tensorMap(0, 1, 64, 32)
    Y_map = Y[:, :, :] @ Sm90_tensorMap(0, 1, 64, 32)
    with CudaDeviceFunction(warp_config=[CudaWarpConfig("tma", 1, setmaxnreg_dec=40), CudaWarpConfig("idle", 3, setmaxnreg_dec=40), CudaWarpConfig("math", 4, setmaxnreg_inc=232)]):
        for task in cuda_tasks(0, T):
            X_s: f32[64, 32] @ CudaSmemLinear
            Y_s: f32[64, 32] @ CudaSmemLinear
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            with CudaWarps(name="tma"):
                Await(war, cuda_temporal, ~1)
                Sm90_copy_tensor_to_smem_linear_2f32(X_s[:, :], X_map[task, 0:64, 0:32], size0=64, size1=32, smem_box=(1, 64, 32)) >> raw
                Arrive(cuda_temporal) >> raw
            with CudaWarps(name="math"):
                Await(raw, cuda_in_order, ~0)
                for t in cuda_threads(0, 128):
                    for j in seq(0, 16):
                        Y_s[t / 2, 16 * (t % 2) + j] = X_s[t / 2, 16 * (t % 2) + j] * X_s[t / 2, 16 * (t % 2) + j]
                Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_generic_and_async_proxy)
            with CudaWarps(name="tma"):
                Sm90_copy_tensor_to_gmem_linear_2f32(Y_map[task, 0:64, 0:32], Y_s[:, :], size0=64, size1=32, smem_box=(1, 64, 32))
                tcg: barrier @ CudaCommitGroup
                Arrive(tma_to_gmem_async) >> tcg
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
