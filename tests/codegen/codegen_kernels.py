"""Test-local kernels for codegen: constructs the bundled examples do not reach.

Every proc here is proved by `verify_proc` (checked in test_codegen_emit.py). Load this file
with `verifier.load.load.load_procs`, not `import` (signatures are postponed annotations).
"""

from verifier.lang import *


@proc
def cluster_exchange(nb: size, x: f32[nb, 2, 128] @ CudaGmemLinear, y: f32[nb, 2, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128, clusterDim=2):
        for blk in cuda_tasks(0, nb):
            s: f32[2, 128] @ CudaSmemLinear
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    s[c, t] = x[blk, c, t]
            Fence(cuda_in_order, cuda_in_order)
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                for t in cuda_threads(0, 128):
                    y[blk, c, t] = s[c, 127 - t]
            Fence(cuda_in_order, cuda_in_order)


@proc
def named_warps(nb: size, x: f32[nb, 128] @ CudaGmemLinear, y: f32[nb, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(warp_config=[CudaWarpConfig("producer", 4, setmaxnreg_dec=40),
                                         CudaWarpConfig("consumer", 4, setmaxnreg_inc=232)]):
        for blk in cuda_tasks(0, nb):
            s: f32[128] @ CudaSmemLinear
            with CudaWarps(name="producer"):
                for t in cuda_threads(0, 128):
                    s[t] = x[blk, t]
            Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(name="consumer"):
                with CudaWarps(1, 3):
                    for t in cuda_threads(0, 64):
                        y[blk, t] = s[127 - t]
            Fence(cuda_in_order, cuda_in_order)


@proc
def host_mix(n: size, coef: f32[4] @ CudaGridConstant, x: [f32][n, 4] @ CudaGmemLinear, y: f32[n, 4] @ CudaGmemLinear, xh: f32[n, 4] @ DRAM, yh: f32[n, 4] @ DRAM):
    assert n % 32 == 0
    tmp: f32[n, 4] @ CudaGmemLinear
    cudaMemcpyAsync_htod_2f32(n, 4, tmp, xh)
    for rep in seq(0, 2):
        with CudaDeviceFunction(blockDim=32):
            for blk in cuda_tasks(0, n / 32):
                for t in cuda_threads(0, 32):
                    for j in seq(0, 4, pragma_unroll=4):
                        y[32 * blk + t, j] = x[32 * blk + t, j] * coef[j] + tmp[32 * blk + t, j]
    cudaMemcpyAsync_dtoh_2f32(n, 4, yh, y)


@proc
def warp_fence_tail(nb: size, x: f32[nb, 64] @ CudaGmemLinear, y: f32[nb, 64] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for blk in cuda_tasks(0, nb):
            s: f32[64] @ CudaSmemLinear
            for w in cuda_threads(0, 2, unit=cuda_warp):
                for l in cuda_threads(0, 32):
                    s[32 * w + l] = x[blk, 32 * w + l]
                Fence(cuda_in_order, cuda_in_order)
                for l in cuda_threads(0, 32):
                    y[blk, 32 * w + l] = s[32 * w + 31 - l]
            Fence(cuda_in_order, cuda_in_order)


@proc
def cp_async_copy(nb: size, x: f32[nb, 1024] @ CudaGmemLinear, y: f32[nb, 1024] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, nb):
            s: f32[1024] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                Sm80_cp_async_f32(s[4 * t:4 * t + 4], x[blk, 4 * t:4 * t + 4], size=4)
            Fence(Sm80_generic, cuda_in_order)
            for t in cuda_threads(0, 256):
                for j in seq(0, 4):
                    y[blk, 4 * t + j] = s[1023 - 4 * t - j]
            Fence(cuda_in_order, cuda_in_order)


@proc
def mma_tile(M: size, N: size, A: f32[M, 8] @ CudaGmemLinear, B: f32[8, N] @ CudaGmemLinear, C: f32[M, N] @ CudaGmemLinear):
    assert M % 64 == 0
    assert N % 16 == 0
    with CudaDeviceFunction(blockDim=128):
        for mt in cuda_tasks(0, M / 64):
            for nt in cuda_tasks(0, N / 16):
                a: f32[4, 16, 8] @ Sm80_RmemMatrixA(16, 8)
                b: f32[4, 2, 8, 8] @ Sm80_RmemMatrixB(8, 8)
                d: f32[4, 2, 16, 8] @ Sm80_RmemMatrixD(16, 8)
                for w in cuda_threads(0, 4, unit=cuda_warp):
                    Sm80_mma_load_a_row_major_tf32(a[w, :, :], A[64 * mt + 16 * w:64 * mt + 16 * w + 16, 0:8], K=8)
                    for j in seq(0, 2):
                        Sm80_mma_load_b_row_major_tf32(b[w, j, :, :], B[0:8, 16 * nt + 8 * j:16 * nt + 8 * j + 8], K=8)
                        Sm80_mma_zero_d_tf32(d[w, j, :, :])
                        Sm80_mma_tf32(d[w, j, :, :], a[w, :, :], b[w, j, :, :], K=8)
                        Sm80_mma_store_d_row_major_tf32(C[64 * mt + 16 * w:64 * mt + 16 * w + 16, 16 * nt + 8 * j:16 * nt + 8 * j + 8], d[w, j, :, :])


@proc
def commit_group_stage(n: size, src: f32[n, 128] @ CudaGmemLinear, dst: f32[n, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for row in cuda_tasks(0, n):
            stage: f32[128] @ CudaSmemLinear
            cg: barrier[32] @ CudaCommitGroup
            for t in cuda_threads(0, 32):
                Sm80_cp_async_f32(stage[4 * t:4 * t + 4], src[row, 4 * t:4 * t + 4], size=4)
                Arrive(Sm80_cp_async) >> cg[t]
                Await(cg[t], cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
            for t in cuda_threads(0, 32):
                for j in seq(0, 4):
                    dst[row, 32 * j + t] = stage[32 * j + t]
            Fence(cuda_in_order, cuda_in_order)



@proc
def shadowed_iterator(nb: size, x: f32[nb, 32] @ CudaGmemLinear, y: f32[nb, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for blk in cuda_tasks(0, nb):
            for t in cuda_threads(0, 1, unit=cuda_warp):
                xw = x[blk, t:t + 32]
                for t in cuda_threads(0, 1):
                    y[blk, 0] = xw[0]


@proc
def mbarrier_pair_rings(nb: size, K: size, x: f32[nb, K, 2, 32] @ CudaGmemLinear, y: f32[nb, K, 2, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for blk in cuda_tasks(0, nb):
            buf: f32[2, 2, 32] @ CudaSmemLinear
            full: barrier[2] @ CudaMbarrier
            empty: barrier(full)[2] @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 2):
                    for w in cuda_threads(0, 2, unit=cuda_warp):
                        Await(empty[w], cuda_in_order, ~2)
                        for l in cuda_threads(0, 32):
                            buf[w, k % 2, l] = x[blk, k, w, l]
                        Arrive(cuda_in_order) >> full[w]
                with CudaWarps(2, 4):
                    for w in cuda_threads(0, 2, unit=cuda_warp):
                        Await(full[w], cuda_in_order, ~0)
                        for l in cuda_threads(0, 32):
                            y[blk, k, w, l] = buf[w, k % 2, 31 - l]
                        Arrive(cuda_in_order) >> empty[w]
            Fence(cuda_in_order, cuda_in_order)


@proc
def cp_async_mbarrier(nb: size, x: f32[nb, 128] @ CudaGmemLinear, y: f32[nb, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for blk in cuda_tasks(0, nb):
            s: f32[128] @ CudaSmemLinear
            bar: barrier @ CudaMbarrier
            for t in cuda_threads(0, 32):
                Sm80_cp_async_f32(s[4 * t:4 * t + 4], x[blk, 4 * t:4 * t + 4], size=4)
            Arrive(Sm80_cp_async) >> bar
            Await(bar, cuda_in_order, ~0)
            for t in cuda_threads(0, 32):
                for j in seq(0, 4):
                    y[blk, 32 * j + t] = s[32 * j + t]
            Fence(Sm80_generic, cuda_in_order)


@proc
def mbarrier_self_lag(nb: size, K: size, x: f32[nb, K, 32] @ CudaGmemLinear, y: f32[nb, K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=32):
        for blk in cuda_tasks(0, nb):
            s: f32[2, 32] @ CudaSmemLinear
            bar: barrier @ CudaMbarrier
            for k in seq(0, K + 1):
                Await(bar, cuda_in_order, ~1)
                if k > 0:
                    for t in cuda_threads(0, 32):
                        y[blk, k - 1, t] = s[(k - 1) % 2, 31 - t]
                if k < K:
                    for t in cuda_threads(0, 32):
                        s[k % 2, t] = x[blk, k, t]
                Arrive(cuda_in_order) >> bar
            Fence(cuda_in_order, cuda_in_order)


@proc
def ws_ring_proxy(T: size, K: size, inp: f32[T, K, 32] @ CudaGmemLinear, y: f32[T, K, 32] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, T):
            buf: f32[3, 32] @ CudaSmemLinear
            full: barrier @ CudaMbarrier
            empty: barrier(full) @ CudaMbarrier
            for k in seq(0, K):
                with CudaWarps(0, 1):
                    Await(empty, cuda_temporal, ~3)
                    for l in cuda_threads(0, 32):
                        buf[k % 3, l] = inp[task, k, l]
                    Arrive(cuda_in_order) >> full
                with CudaWarps(1, 2):
                    Await(full, cuda_generic_and_async_proxy, ~0)
                    for l in cuda_threads(0, 32):
                        y[task, k, l] = buf[k % 3, 31 - l]
                    Arrive(cuda_in_order) >> empty
            Fence(cuda_in_order, cuda_in_order)


# Issue 3 reproducer (COLL-5.11): bar is allocated inside the warp loop, one slice per warp.
@proc
def mbarrier_warp_slices(T: size, K: size, y: f32[T, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            buf: f32[128] @ CudaSmemLinear
            for w in cuda_threads(0, 4, unit=cuda_warp):
                bar: barrier @ CudaMbarrier
                for k in seq(0, K):
                    for l in cuda_threads(0, 32):
                        buf[32 * w + l] = 1.0
                    Arrive(cuda_in_order) >> bar
                    Await(bar, cuda_in_order, ~0)
                    for l in cuda_threads(0, 32):
                        y[task, 32 * w + l] = buf[32 * w + 31 - l]
                    Arrive(cuda_in_order) >> bar
                    Await(bar, cuda_in_order, ~0)
            Fence(cuda_in_order, cuda_in_order)


# COLL-5.11: slice index = h (explicit index) * 2 + w (enclosing iterator of the allocation).
@proc
def mbarrier_mixed_slices(T: size, y: f32[T, 2, 2, 16] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, T):
            buf: f32[2, 2, 16] @ CudaSmemLinear
            for w in cuda_threads(0, 2, unit=cuda_warp):
                bar: barrier[2] @ CudaMbarrier
                for h in cuda_threads(0, 2, unit=16 * cuda_thread):
                    for l in cuda_threads(0, 16):
                        buf[w, h, l] = 1.0
                    Arrive(cuda_in_order) >> bar[h]
                    Await(bar[h], cuda_in_order, ~0)
                    for l in cuda_threads(0, 16):
                        y[task, w, h, l] = buf[w, h, 15 - l]
                Fence(cuda_in_order, cuda_in_order)
            Fence(cuda_in_order, cuda_in_order)


# kind::f16 tcgen05.mma (BW-CG-3): f16 tiles stored by the threads into 32-byte-swizzled SMEM, made
# visible to the async proxy, one overwriting MMA (BW-2.3), its commit awaited, the accumulator
# read back.
@proc
def bw_mma_f16(T: size, A: f16[128 * T, 16] @ CudaGmemLinear, B: f16[64, 16] @ CudaGmemLinear,
               C: f32[128 * T, 64] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            A_s: f16[128, 16] @ Sm90_SmemSwizzled(32)
            B_s: f16[64, 16] @ Sm90_SmemSwizzled(32)
            D: f32[128, 64] @ Sm100_Tmem
            done: barrier @ CudaMbarrier
            with CudaWarps(0, 1):
                Sm100_tmem_alloc(D[:, :], ncols=64)
            for i in cuda_threads(0, 128, unit=cuda_thread):
                for j in seq(0, 16):
                    A_s[i, j] = A[128 * task + i, j]
            for i in cuda_threads(0, 64, unit=cuda_thread):
                for j in seq(0, 16):
                    B_s[i, j] = B[i, j]
            Fence(cuda_in_order, cuda_generic_and_async_proxy)
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            with CudaWarps(0, 1):
                for t in cuda_threads(0, 1, unit=cuda_thread):
                    Sm100_mma_f16_zero_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)
                    Arrive(tcgen05_commit) >> done
                    Await(done, tcgen05_after_thread_sync, ~0)
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            for wg in cuda_threads(0, 1, unit=cuda_warpgroup):
                Dr: f32[128, 64] @ Sm100_RmemMatrixD
                Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[:, :], N=64)
                Fence(tcgen05_ld, cuda_in_order)
                Sm100_store_d_row_major_f32(C[128 * task:128 * task + 128, :], Dr[:, :], N=64)
            Fence(cuda_in_order, cuda_in_order)
            with CudaWarps(0, 1):
                Sm100_tmem_dealloc(D[:, :], ncols=64)


# cta_group::1 tcgen05.commit multicast to both CTAs of a cluster (BW-CG-4): B multicast by TMA to
# the pair, each stage released to both producers by the consumer's commit, bw_gemm's epilogue.
@proc
def bw_gemm_commit_multicast(M: size, K: size, A: f32[M, K] @ CudaGmemLinear,
                      B: f32[64, K] @ CudaGmemLinear, C: f32[M, 64] @ CudaGmemLinear):
    assert M % 256 == 0
    assert K % 32 == 0
    A_map = A[:, :] @ Sm90_tensorMap(128, 128, 32)
    B_map = B[:, :] @ Sm90_tensorMap(128, 32, 32)
    with CudaDeviceFunction(clusterDim=2, blockDim=256):
        for tm in cuda_tasks(0, M / 256):
            A_s: f32[2, 2, 128, 32] @ Sm90_SmemSwizzled(128)
            B_s: f32[2, 2, 64, 32] @ Sm90_SmemSwizzled(128)
            D: f32[2, 128, 64] @ Sm100_Tmem
            raw: barrier[2] @ CudaMbarrier
            war: barrier(raw)[2] @ CudaMbarrier
            done: barrier[2] @ CudaMbarrier
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(0, 1):
                    Sm100_tmem_alloc(D[c, :, :], ncols=64)
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            for k in seq(0, K / 32):
                with CudaWarps(0, 1):
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Await(war[c], cuda_temporal, ~1)
                        Sm90_copy_tensor_to_smem_swizzled_2f32(A_s[c, k % 2, :, :], A_map[256 * tm + 128 * c:256 * tm + 128 * c + 128, 32 * k:32 * k + 32], size0=128, size1=32) >> raw[c]
                    Sm90_multicast_copy_tensor_to_smem_swizzled_2f32(B_s[:, k % 2, :, :], B_map[0:64, 32 * k:32 * k + 32], ncta=2, cta_stride=1, size0=64, size1=32) >> raw[:]
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        Arrive(cuda_temporal) >> raw[c] >> raw[:]
                with CudaWarps(4, 8):
                    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                        for t in cuda_threads(0, 1, unit=cuda_thread):
                            Await(raw[c], cuda_generic_and_async_proxy, ~0)
                            for kk in seq(0, 4):
                                if k == 0 and kk == 0:
                                    Sm100_mma_tf32_zero_cta1(D[c, :, :], A_s[c, k % 2, :, 8 * kk:8 * kk + 8], B_s[c, k % 2, :, 8 * kk:8 * kk + 8], M=128, N=64)
                                else:
                                    Sm100_mma_tf32_cta1(D[c, :, :], A_s[c, k % 2, :, 8 * kk:8 * kk + 8], B_s[c, k % 2, :, 8 * kk:8 * kk + 8], M=128, N=64)
                            Arrive(tcgen05_commit) >> war[c] >> war[:]
            with CudaWarps(4, 8):
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for t in cuda_threads(0, 1, unit=cuda_thread):
                        Arrive(tcgen05_commit) >> done[c]
                        Await(done[c], tcgen05_after_thread_sync, ~0)
            Fence(cuda_in_order, tcgen05_after_thread_sync)
            with CudaWarps(4, 8):
                for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                    for wg in cuda_threads(0, 1, unit=cuda_warpgroup):
                        Dr: f32[128, 64] @ Sm100_RmemMatrixD
                        Sm100_tmem_ld_32x32b_f32(Dr[:, :], D[c, :, :], N=64)
                        Fence(tcgen05_ld, cuda_in_order)
                        Sm100_store_d_row_major_f32(C[256 * tm + 128 * c:256 * tm + 128 * c + 128, :], Dr[:, :], N=64)
            Fence(cuda_in_order, cuda_in_order)
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                with CudaWarps(0, 1):
                    Sm100_tmem_dealloc(D[c, :, :], ncols=64)
