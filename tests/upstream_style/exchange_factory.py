# expect: exchange_fenced_t128 proved
# expect: exchange_unfenced_t128 refuted RAW tile 39
# A proc built by a factory, as sporkbench builds its GEMMs: names only in annotations and
# `with` arguments come from the factory's locals; Python-bool `if`s are folded at parse time;
# unused barriers are deleted; rename / set_precision / simplify / name() / sync_check.
from __future__ import annotations

from exo import *
from exo.platforms.cuda import *
from exo.stdlib.scheduling import *

from exchange_config import config, ExchangeConfig

config.threads = 128
config.elem = "f16"


def make_exchange(cfg: ExchangeConfig, *, use_fence: bool):
    threads = cfg.threads
    n_warps = threads / 32.0  # an integral float, accepted where an int is expected
    smem_type = CudaSmemLinear
    LAG = 0 if use_fence else 1
    sync_name = "fenced" if use_fence else "unfenced"

    @proc
    def p(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
        assert n % threads == 0
        with CudaDeviceFunction(blockDim=threads):
            for blk in cuda_tasks(0, n / threads):
                unused: barrier @ CudaMbarrier
                tile: f32[threads] @ smem_type
                for w in cuda_threads(0, n_warps, unit=cuda_warp):
                    for t in cuda_threads(0, 32):
                        tile[32 * w + t] = x[threads * blk + 32 * w + t]
                if True:
                    if LAG == 0:
                        Fence(cuda_in_order, cuda_in_order)
                for t in cuda_threads(0, threads):
                    y[threads * blk + t] = tile[threads - 1 - t]
                if use_fence:
                    Fence(cuda_in_order, cuda_in_order)
                else:
                    Fence(cuda_in_order, cuda_in_order)

    p = rename(p, cfg.make_proc_name(sync_name))
    p = delete_buffer(p, p.find_alloc_or_arg("unused"))
    p = set_precision(p, "tile", cfg.elem)
    p = simplify(p)
    if use_fence:
        p.sync_check(n=2 * threads)
    assert p.name() == cfg.make_proc_name(sync_name)
    return p


exchange_fenced = make_exchange(config, use_fence=True)
exchange_unfenced = make_exchange(config, use_fence=False)
