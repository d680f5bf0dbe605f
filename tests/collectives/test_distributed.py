"""Distributed memory deduction: examples C4, C10, C11 of collectives.md §8 and COLL-5 errors."""

from __future__ import annotations

import pytest

from verifier.collectives import (
    NotAVariable,
    deduce_distribution,
    owner_threads,
    thread_set,
    tile_threads,
    tile_warps,
    top_tiling,
)
from verifier.collectives.tiling import Tiling
from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction, CudaWarps
from verifier.lang.stdlib.units import CollUnit, cuda_cta_in_cluster, cuda_thread, cuda_warp

PREFIX = "Distributed memory deduction for acc failed: "


def loop(t: Tiling, name: str, hi: int, unit: CollUnit, dev: CudaDeviceFunction) -> Tiling:
    return tile_threads(t, name, name, 0, hi, unit, dev)


def c4() -> tuple[CudaDeviceFunction, Tiling, Tiling, Tiling]:
    dev = CudaDeviceFunction(blockDim=512)
    top = top_tiling(dev)
    m = loop(top, "m", 16, 32 * cuda_thread, dev)
    return dev, top, m, loop(m, "n", 32, cuda_thread, dev)


@pytest.mark.rule("COLL-5.2")
@pytest.mark.rule("COLL-5.6")
def test_c4_register_tile() -> None:
    dev, top, _, n = c4()
    assert [(g.c_name, g.expr.to_c()) for g in n.guards] == [
        ("exo_32thr_m", "threadIdx.x / 32"), ("exo_1thr_n", "threadIdx.x % 32")]
    dist = deduce_distribution(top, cuda_thread, [(n, ["m", "n", "i", "j"])], [16, 32, 8, 4],
                               dev, name="acc")
    assert (dist.R, dist.pitches, dist.shard_shape) == (2, (32, 1), (8, 4))
    for m_val, n_val in ((0, 0), (3, 5), (15, 31)):
        assert owner_threads(dist, [m_val, n_val]) == {32 * m_val + n_val}
        assert thread_set(n, {"m": m_val, "n": n_val}, dev) == {32 * m_val + n_val}


@pytest.mark.rule("COLL-5.7")
def test_c4_transposed_and_inconsistent_uses() -> None:
    dev, top, _, n = c4()
    dist = deduce_distribution(top, cuda_thread, [(n, ["n", "m"])], [32, 16], dev, name="acc")
    assert dist.pitches == (1, 32)
    sq_dev = CudaDeviceFunction(blockDim=256)
    sq_m = loop(top_tiling(sq_dev), "m", 16, 16 * cuda_thread, sq_dev)
    sq_n = loop(sq_m, "n", 16, cuda_thread, sq_dev)
    with pytest.raises(RejectedInput, match=r"m\.thread_pitch \(16\) != n\.thread_pitch \(1\)"):
        deduce_distribution(top_tiling(sq_dev), cuda_thread,
                            [(sq_n, ["m", "n"]), (sq_n, ["n", "m"])], [16, 16], sq_dev,
                            name="acc")


@pytest.mark.rule("COLL-5.6")
@pytest.mark.rule("COLL-5.5")
def test_c4_error_variants() -> None:
    dev, top, m, n = c4()
    shape = [16, 32, 8, 4]
    cases = [
        ([(n, ["m", "i", "n", "j"])], [16, 8, 32, 4], "Expected cuda_threads-loop iterator, not i"),
        ([(n, ["m"])], shape, "Missing: n"),
        ([(n, [NotAVariable("m + 1"), "n"])], shape, "Expected single variable name, not m + 1"),
        ([(n, ["m", "m"])], [16, 16], "m repeated unexectedly"),
        ([(n, ["m", "n"])], [16, "N"], "shape[1] must be constant"),
        ([(n, ["m", "n"])], [16, 16], "n.tile_count = 32; must be 16 to match underlying tensor"),
        ([(m, ["m", "n"])], shape, "Missing subdivision on dims[0] to match cuda_thread"),
    ]
    for uses, shp, text in cases:
        with pytest.raises(RejectedInput) as exc:
            deduce_distribution(top, cuda_thread, uses, shp, dev, name="acc")
        assert exc.value.message.startswith(PREFIX + text), exc.value.message
        assert exc.value.code == "ERR-A23"


@pytest.mark.rule("COLL-5.5")
def test_c4_allocation_inside_m_loop() -> None:
    dev, _, m, n = c4()
    dist = deduce_distribution(m, cuda_thread, [(n, ["n", "i", "j"])], [32, 8, 4], dev,
                               name="acc")
    assert (dist.R, dist.pitches) == (1, (1,))
    assert owner_threads(dist, [5], {"m": 3}) == {101}


@pytest.mark.rule("COLL-5.4")
@pytest.mark.rule("COLL-5.6")
def test_c10_smem_shards_per_cta() -> None:
    dev = CudaDeviceFunction(blockDim=256, clusterDim=4)
    top = top_tiling(dev)
    x = loop(top, "x", 4, cuda_cta_in_cluster, dev)
    y = loop(x, "y", 4, 64 * cuda_thread, dev)
    z = loop(y, "z", 32, cuda_thread, dev)
    assert [(g.c_name, g.expr.to_c(), g.cond_c()) for g in z.guards] == [
        ("exo_256thr_x", "blockIdx.x % 4", "1"), ("exo_64thr_y", "threadIdx.x / 64", "1"),
        ("exo_1thr_z", "threadIdx.x % 64", "exo_1thr_z < 32")]
    dist = deduce_distribution(top, cuda_cta_in_cluster, [(z, ["x", "y", "z"])], [4, 4, 64],
                               dev, name="smem")
    assert (dist.R, dist.pitches, dist.shard_shape) == (1, (256,), (4, 64))
    assert owner_threads(dist, [2]) == frozenset(range(512, 768))
    x2 = loop(top, "x", 4, 64 * cuda_thread, dev)
    z2 = loop(loop(x2, "y", 4, cuda_cta_in_cluster, dev), "z", 32, cuda_thread, dev)
    with pytest.raises(RejectedInput, match="x is not an expected distributed iterator"):
        deduce_distribution(top, cuda_cta_in_cluster, [(z2, ["x", "y", "z"])], [4, 4, 64], dev,
                            name="smem")
    dev128 = CudaDeviceFunction(blockDim=128)
    w = loop(top_tiling(dev128), "w", 4, cuda_warp, dev128)
    with pytest.raises(RejectedInput, match="Missing threads to match cuda_cta_in_cluster"
                       ) as exc:
        deduce_distribution(w, cuda_cta_in_cluster, [(w, [])], [64], dev128, name="smem")
    assert exc.value.rule == "COLL-5.4"


@pytest.mark.rule("COLL-1.15")
@pytest.mark.rule("COLL-5.7")
def test_c11_offset_only_mismatch() -> None:
    dev = CudaDeviceFunction(blockDim=256)
    top = top_tiling(dev)
    n1 = loop(loop(top, "m", 16, 4 * cuda_thread, dev), "n", 4, cuda_thread, dev)
    warps, _ = tile_warps(top, CudaWarps(1, 3), dev, "")
    m2 = loop(warps, "m2", 16, 4 * cuda_thread, dev)
    assert m2.guards[-1].expr.to_c() == "((threadIdx.x - 32) / 4)"
    n2 = loop(m2, "n2", 4, cuda_thread, dev)
    with pytest.raises(RejectedInput, match="Distributed memory deduction for vals failed: "
                                            "Incompatible offsets"):
        deduce_distribution(top, cuda_thread, [(n1, ["m", "n"]), (n2, ["m2", "n2"])], [16, 4],
                            dev, name="vals")
    w2, _ = tile_warps(top, CudaWarps(2, 3), dev, "")
    w3, _ = tile_warps(top, CudaWarps(3, 4), dev, "")
    with pytest.raises(RejectedInput, match="Incompatible offsets"):
        deduce_distribution(top, cuda_warp, [(w2, []), (w3, [])], [16, 8], dev, name="D")
    smem = deduce_distribution(top, cuda_cta_in_cluster, [(w2, []), (n1, [])], [16], dev,
                               name="S")
    assert smem.R == 0
