"""Static errors of cuda_threads loops, CudaWarps, scalar writes and fences (COLL-2, COLL-3)."""

from __future__ import annotations

import pytest

from verifier.collectives import (
    fence_scope,
    matches_unit,
    one_thread,
    thread_set,
    tile_threads,
    tile_warps,
    top_tiling,
)
from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction, CudaWarpConfig, CudaWarps
from verifier.lang.stdlib.units import CollUnit, cuda_thread, cuda_warp, cuda_warpgroup

DEV = CudaDeviceFunction(blockDim=256)
NAMED = CudaDeviceFunction(warp_config=[CudaWarpConfig("producer", 1),
                                        CudaWarpConfig("xyz", 7)])


@pytest.mark.rule("COLL-2.7")
@pytest.mark.parametrize("lo, hi, text", [
    (1, 4, "expected 0 for lo of i loop"),
    ("n", 4, "expected literal int value for lo of i loop"),
    (0, "n", "expected literal int value for hi of i loop"),
    (0, 0, "hi must be ≥ 1"),
])
def test_cuda_threads_bounds(lo: object, hi: object, text: str) -> None:
    with pytest.raises(RejectedInput, match=text) as exc:
        tile_threads(top_tiling(DEV), "i", "i", lo, hi, cuda_thread, DEV)
    assert exc.value.code == "ERR-A20"


@pytest.mark.rule("COLL-1.3")
def test_ill_formed_unit() -> None:
    with pytest.raises(RejectedInput, match="ill-formed CollUnit") as exc:
        tile_threads(top_tiling(DEV), "i", "i", 0, 1, CollUnit((8,), (16,)), DEV)
    assert exc.value.code == "ERR-O09"


@pytest.mark.rule("COLL-1.6")
def test_invalid_alignment_for_unit() -> None:
    t = tile_threads(top_tiling(DEV), "i", "i", 0, 2, 96 * cuda_thread, DEV)
    text = matches_unit(t, 96 * cuda_thread, DEV)
    assert text is not None and text.startswith("Invalid alignment for CollUnit((256,), (96,))")


@pytest.mark.rule("COLL-2.12")
def test_top_level_named_warps() -> None:
    top = top_tiling(NAMED)
    body, name = tile_warps(top, CudaWarps(1, 4, name="xyz"), NAMED, None)
    assert name == "xyz"
    real = [g for g in body.guards if not g.discarded]
    assert [(g.c_name, g.expr.to_c(), g.cond_c()) for g in real] == [
        ("CudaWarps_1_4_xyz", "(threadIdx.x - 32)", "CudaWarps_1_4_xyz >= 32 && "
                                                    "CudaWarps_1_4_xyz < 128")]
    assert thread_set(body, {}, NAMED) == frozenset(range(64, 160))
    default, _ = tile_warps(top, CudaWarps(name="xyz"), NAMED, None)
    assert thread_set(default, {}, NAMED) == frozenset(range(32, 256))
    producer, _ = tile_warps(top, CudaWarps(name="producer"), NAMED, None)
    assert thread_set(producer, {}, NAMED) == frozenset(range(32))


@pytest.mark.rule("COLL-2.12")
@pytest.mark.rule("COLL-2.13")
def test_cuda_warps_errors() -> None:
    top = top_tiling(NAMED)
    cases = [
        (top, CudaWarps(0, 1), None, "top-level CudaWarps must provide valid warp name, not None"),
        (top, CudaWarps(name="abc"), None, "your CudaDeviceFunction defines: ['producer', 'xyz']"),
        (top, CudaWarps(0, 8, name="xyz"), None, "CudaWarps.hi=8 out-of-range for 'xyz'"),
        (tile_threads(top, "i", "i", 0, 2, cuda_warp, NAMED), CudaWarps(name="xyz"), None,
         "requires CTA not to be subdivided by parent cuda_threads loop"),
    ]
    inner, _ = tile_warps(top, CudaWarps(name="xyz"), NAMED, None)
    cases += [
        (inner, CudaWarps(0, 1, name="producer"), "xyz",
         "nested CudaWarps cannot change warp name from 'xyz' to 'producer'"),
        (inner, CudaWarps(name="xyz"), "xyz", "nested CudaWarps must define lo and hi explicitly"),
        (inner, CudaWarps(0, 9), "xyz", "failed to compile CudaWarps(0, 9)"),
    ]
    for parent, warps, current, text in cases:
        with pytest.raises(RejectedInput) as exc:
            tile_warps(parent, warps, NAMED, current)
        assert text in exc.value.message, exc.value.message
        assert exc.value.code == "ERR-A22"
    single = CudaDeviceFunction(warp_config=[CudaWarpConfig("x", 4)])
    with pytest.raises(RejectedInput, match="must define lo and hi explicitly"):
        tile_warps(top_tiling(single), CudaWarps(name="x"), single, top_tiling(single).warp_name)


@pytest.mark.rule("COLL-2.13")
def test_nested_cuda_warps_inside_warpgroups() -> None:
    dev = CudaDeviceFunction(blockDim=512)
    wg = tile_threads(top_tiling(dev), "wg", "wg", 0, 4, cuda_warpgroup, dev)
    w, _ = tile_warps(wg, CudaWarps(3, 4), dev, "")
    assert thread_set(w, {"wg": 2}, dev) == frozenset(range(352, 384))


@pytest.mark.rule("COLL-2.6")
def test_scalar_write_needs_one_thread() -> None:
    t = tile_threads(top_tiling(DEV), "i", "i", 0, 8, 32 * cuda_thread, DEV)
    with pytest.raises(RejectedInput,
                       match=r"write must be executed by one thread only \(current: 32 threads\)"
                       ) as exc:
        one_thread(t, DEV)
    assert exc.value.code == "ERR-A18"
    one_thread(tile_threads(t, "j", "j", 0, 32, cuda_thread, DEV), DEV)


@pytest.mark.rule("COLL-3.2")
def test_fence_scopes() -> None:
    top = top_tiling(DEV)
    assert fence_scope(top, DEV) == "cta"
    wg = tile_threads(top, "wg", "wg", 0, 2, cuda_warpgroup, DEV)
    with pytest.raises(RejectedInput, match="Fence collective unit matched no known case") as exc:
        fence_scope(wg, DEV)
    assert exc.value.code == "ERR-L02"
    warps, _ = tile_warps(top, CudaWarps(2, 6), DEV, "")
    with pytest.raises(RejectedInput, match="matched no known case"):
        fence_scope(warps, DEV)
    cluster = CudaDeviceFunction(blockDim=128, clusterDim=2)
    assert fence_scope(top_tiling(cluster), cluster) == "cluster"
