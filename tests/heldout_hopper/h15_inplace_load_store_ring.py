# expect: h15_inplace_load_store_ring proved
# spec: PROVED. An elementwise pipeline over a 2-slot ring: the TMA warp loads tile k into slot
# k % 2, the math warpgroup scales it in place with ordinary code, a CTA fence with
# cuda_generic_and_async_proxy hands the slot to the async proxy (SEM-3.4), warp 4 TMA-stores
# it and waits for the bulk group (SEM-8.4), and only then does the math warpgroup release the
# slot (Arrive >> war witnesses warp 4's retired store read, cuda2 full, SEM-5.1). The
# producer's Await(war, ~2) pairs with the release of the slot's previous use (2 slots,
# wait 0: lag 2 is exact, S7), so its TMA refill finds temp on the store's read and the
# in-place writes (SEM-4.5).
from verifier.lang import *


@proc
def h15_inplace_load_store_ring(T: size, K: size, X: f32[T, 32 * K, 32] @ CudaGmemLinear,
                                Y: f32[T, 32 * K, 32] @ CudaGmemLinear):
    X_map = X[:, :, :] @ Sm90_tensorMap(0, 1, 32, 32)
    Y_map = Y[:, :, :] @ Sm90_tensorMap(0, 1, 32, 32)
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, T):
            S: f32[2, 32, 32] @ CudaSmemLinear
            raw: barrier @ CudaMbarrier
            war: barrier(raw) @ CudaMbarrier
            tcg: barrier @ CudaCommitGroup
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(war, cuda_temporal, ~2)
                    Sm90_copy_tensor_to_smem_linear_2f32(S[k % 2, :, :], X_map[task, 32 * k:32 * k + 32, 0:32], size0=32, size1=32, smem_box=(1, 32, 32)) >> raw
                    Arrive(cuda_temporal) >> raw
                with CudaWarps(4, 8):
                    Await(raw, cuda_in_order, ~0)
                    for t in cuda_threads(0, 128):
                        for j in seq(0, 8):
                            S[k % 2, t / 4, 8 * (t % 4) + j] = S[k % 2, t / 4, 8 * (t % 4) + j] * 3.0
                Fence(cuda_in_order, cuda_generic_and_async_proxy)
                with CudaWarps(4, 5):
                    Sm90_copy_tensor_to_gmem_linear_2f32(Y_map[task, 32 * k:32 * k + 32, 0:32], S[k % 2, :, :], size0=32, size1=32, smem_box=(1, 32, 32))
                    Arrive(tma_to_gmem_async) >> tcg
                    Await(tcg, cuda_in_order, 0)
                with CudaWarps(4, 8):
                    Arrive(cuda_in_order) >> war
            Fence(cuda_in_order, cuda_in_order)
