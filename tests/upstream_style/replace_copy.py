# expect: vec_add_f16 proved
# expect: vec_add_f16_no_fence refuted RAW s_x 34
# API-1: `replace(p, p.find_loop(name), instr)` turns a copy nest into the copy instr's call
# (host copies, packed 32-bit loads/stores), as upstream's tests/cuda/test_cu_f16.py builds
# its procs; without the Fence, threads read SMEM that other threads' packed stores wrote.
from __future__ import annotations

from exo import *
from exo.platforms.cuda import *
from exo.stdlib.scheduling import *


def make(fence: bool):
    @proc
    def p(N: size, h_x: f32[N], h_out: f32[N]):
        assert N % 512 == 0
        d_x: f32[N] @ CudaGmemLinear
        d_out: f32[N] @ CudaGmemLinear
        for init_n in seq(0, N):
            d_x[init_n] = h_x[init_n]
        with CudaDeviceFunction(blockDim=256):
            for task in cuda_tasks(0, N / 512):
                s_x: f32[512] @ CudaSmemLinear
                for tid in cuda_threads(0, 256):
                    r_x: f32[2] @ CudaRmemPacked32
                    for pack_ld in seq(0, 2):
                        r_x[pack_ld] = d_x[task * 512 + tid * 2 + pack_ld]
                    for pack_st in seq(0, 2):
                        s_x[tid * 2 + pack_st] = r_x[pack_st]
                if fence:
                    Fence(cuda_in_order, cuda_in_order)
                for tid in cuda_threads(0, 256):
                    # each thread reads the pair its neighbour stored
                    d_out[task * 512 + tid] = s_x[(tid * 2 + 2) % 512]
                Fence(cuda_in_order, cuda_in_order)  # SMEM reads done before it is freed
        cudaMemcpyAsync_dtoh_1d(N, h_out[:], d_out[:], dst=f32, src=f32)

    for name in ("h_x", "d_x", "r_x", "s_x"):
        p = set_precision(p, name, "f16")
    p = replace(p, p.find_loop("init_n"), cudaMemcpyAsync_htod_1d)
    p = replace(p, p.find_loop("pack_ld"), cuda_packed32_load)
    p = replace(p, p.find_loop("pack_st"), cuda_packed32_store)
    return simplify(p)


vec_add_f16 = rename(make(True), "vec_add_f16")
vec_add_f16_no_fence = rename(make(False), "vec_add_f16_no_fence")
