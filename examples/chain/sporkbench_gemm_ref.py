"""References for sporkbench's Sm80 GEMMs (batched, C stored transposed as C[batch, n, m], A and
B split along K as [.., K_splits, K_cta]): benchmarks/chain.py. The dataParallel kernels store
C once per k split, so they compute the GEMM when K_splits == 1; the splitK kernels zero C
(cudaMemsetAsync) and then add every split's partial product into it."""
from __future__ import annotations

from exo import DRAM, proc


@proc
def gemm_data_parallel(L: size, M: size, N: size, K_splits: size, K_cta: size, A: f32[L, M, K_splits, K_cta] @ DRAM, B: f32[L, N, K_splits, K_cta] @ DRAM, C: f32[L, N, M] @ DRAM):
    assert K_splits == 1
    for b in seq(0, L):
        for n in seq(0, N):
            for m in seq(0, M):
                C[b, n, m] = 0.0
                for k in seq(0, K_cta):
                    C[b, n, m] += A[b, m, 0, k] * B[b, n, 0, k]


@proc
def gemm_split_k(L: size, M: size, N: size, K_splits: size, K_cta: size, A: f32[L, M, K_splits, K_cta] @ DRAM, B: f32[L, N, K_splits, K_cta] @ DRAM, C: f32[L, N, M] @ DRAM):
    for b in seq(0, L):
        for n in seq(0, N):
            for m in seq(0, M):
                C[b, n, m] = 0.0
                for s in seq(0, K_splits):
                    for k in seq(0, K_cta):
                        C[b, n, m] += A[b, m, s, k] * B[b, n, s, k]
