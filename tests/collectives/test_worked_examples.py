"""Worked examples C1..C13 of collectives.md §8: tilings, guard C text, thread sets, verdicts."""

from __future__ import annotations

import pytest

from verifier.collectives import (
    fence_scope,
    matches_unit,
    pow2_alignment,
    require_unit,
    thread_set,
    tile_threads,
    tile_warps,
    top_tiling,
)
from verifier.collectives.tiling import Tiling
from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction, CudaWarpConfig, CudaWarps
from verifier.lang.stdlib.units import (
    CollUnit,
    blockDim,
    cuda_agnostic_intact_cta,
    cuda_agnostic_sub_cta,
    cuda_cta_in_cluster,
    cuda_cta_in_cluster_strided,
    cuda_quadpair,
    cuda_thread,
    cuda_threads_strided,
    cuda_warp,
    cuda_warp_in_cluster,
    cuda_warp_in_cluster_strided,
    cuda_warpgroup,
    standalone_thread,
)


def guards(t: Tiling) -> list[tuple[str, str, str]]:
    return [(g.c_name, g.expr.to_c(), g.cond_c()) for g in t.guards if not g.discarded]


def loop(t: Tiling, name: str, hi: int, unit: CollUnit, dev: CudaDeviceFunction) -> Tiling:
    return tile_threads(t, name, name, 0, hi, unit, dev)


@pytest.mark.rule("COLL-4.5")
@pytest.mark.rule("COLL-1.14")
def test_c1_groups_of_16_then_threads() -> None:
    dev = CudaDeviceFunction(blockDim=128)
    g = loop(top_tiling(dev), "g", 8, 16 * cuda_thread, dev)
    t = loop(g, "t", 16, cuda_thread, dev)
    assert t.describe() == "(128, 1; g[0,16,8,16], t[0,1,16,1])"
    assert t.box == (1,)
    assert guards(t) == [("exo_16thr_g", "threadIdx.x / 16", "1"),
                         ("exo_1thr_t", "threadIdx.x % 16", "1")]
    assert thread_set(g, {"g": 3}, dev) == frozenset(range(48, 64))
    assert thread_set(t, {"g": 3, "t": 5}, dev) == {53}
    assert [gd.thread_pitch for gd in t.guards] == [16, 1]
    assert pow2_alignment(g) == 16 and pow2_alignment(t) == 1
    assert matches_unit(g, 16 * cuda_thread, dev) is None
    assert matches_unit(g, cuda_warp, dev) == ("domain=(4, 32), box=(4, 16) (64 threads); "
                                               "expected box=(1, 32)")
    assert matches_unit(t, cuda_thread, dev) is None
    assert matches_unit(t, standalone_thread, dev) is None
    assert matches_unit(t, cuda_warp, dev) is not None
    assert fence_scope(t, dev) == "thread"


@pytest.mark.rule("COLL-2.13")
@pytest.mark.rule("COLL-4.3")
def test_c2_warpgroups_then_cudawarps() -> None:
    dev = CudaDeviceFunction(blockDim=256)
    wg = loop(top_tiling(dev), "wg", 2, cuda_warpgroup, dev)
    w, name = tile_warps(wg, CudaWarps(3, 4), dev, wg.warp_name)
    assert name == ""
    assert w.describe() == "(256, 1; wg[0,128,2,128], CudaWarps_3_4_[96,32,1,0])"
    assert guards(w) == [("exo_128thr_wg", "threadIdx.x / 128", "1"),
                         ("CudaWarps_3_4_", "threadIdx.x % 128", "CudaWarps_3_4_ >= 96")]
    assert thread_set(w, {"wg": 0}, dev) == frozenset(range(96, 128))
    assert thread_set(w, {"wg": 1}, dev) == frozenset(range(224, 256))
    assert matches_unit(w, cuda_warp, dev) is None
    assert matches_unit(w, cuda_warpgroup, dev) == ("domain=(2, 128), box=(1, 32) (32 threads); "
                                                    "expected box=(1, 128)")
    assert matches_unit(w, cuda_thread, dev) is not None
    with pytest.raises(RejectedInput, match=r"wrong collective unit \(need cuda_warpgroup\)"):
        require_unit(w, cuda_warpgroup, dev, "wgmma")
    assert fence_scope(w, dev) == "warp"


@pytest.mark.rule("COLL-2.8")
@pytest.mark.rule("COLL-4.5")
def test_c3a_one_warp_per_cta() -> None:
    dev = CudaDeviceFunction(blockDim=128, clusterDim=4)
    cta = loop(top_tiling(dev), "cta", 4, cuda_cta_in_cluster, dev)
    w = loop(cta, "w", 1, cuda_warp, dev)
    assert w.describe() == "(4, 128; cta[0,1,4,128]) x (128, 1; w[0,32,1,0])"
    assert w.box == (1, 32)
    assert guards(w) == [("exo_128thr_cta", "blockIdx.x % 4", "1"),
                         ("exo_0thr_w", "threadIdx.x / 32", "exo_0thr_w < 1")]
    for c in range(4):
        assert thread_set(w, {"cta": c, "w": 0}, dev) == frozenset(range(128 * c, 128 * c + 32))
    for unit in (cuda_warp, cuda_warp_in_cluster, cuda_agnostic_sub_cta):
        assert matches_unit(w, unit, dev) is None, unit.name
    for unit in (cuda_warpgroup, 4 * cuda_warp_in_cluster_strided(1)):
        assert matches_unit(w, unit, dev) is not None, unit.name
    assert fence_scope(w, dev) == "warp"
    assert fence_scope(cta, dev) == "cta"
    assert fence_scope(top_tiling(dev), dev) == "cluster"


@pytest.mark.rule("COLL-2.8")
def test_c3b_warp_at_cluster_scope_is_one_per_cta() -> None:
    dev = CudaDeviceFunction(blockDim=128, clusterDim=4)
    w = loop(top_tiling(dev), "w", 1, cuda_warp, dev)
    assert w.box == (4, 32)
    assert guards(w) == [("exo_0thr_w", "threadIdx.x / 32", "exo_0thr_w < 1")]
    assert thread_set(w, {"w": 0}, dev) == frozenset(
        n for r in range(4) for n in range(128 * r, 128 * r + 32))
    assert matches_unit(w, cuda_warp, dev) == ("domain=(4, 4, 32), box=(4, 1, 32) (128 threads);"
                                               " expected box=(1, 1, 32)")
    assert matches_unit(w, 4 * cuda_warp_in_cluster_strided(1), dev) is None
    assert matches_unit(w, cuda_agnostic_sub_cta, dev) is not None
    assert matches_unit(w, cuda_agnostic_intact_cta, dev) is not None
    with pytest.raises(RejectedInput, match="Fence collective unit matched no known case") as exc:
        fence_scope(w, dev)
    assert exc.value.code == "ERR-L02"


@pytest.mark.rule("COLL-2.12")
@pytest.mark.rule("COLL-4.6")
def test_c5_named_warps_in_cluster() -> None:
    dev = CudaDeviceFunction(clusterDim=8, warp_config=[
        CudaWarpConfig("producer", 1, setmaxnreg_dec=40),
        CudaWarpConfig("unused", 3, setmaxnreg_dec=40),
        CudaWarpConfig("consumer", 8, setmaxnreg_inc=232)])
    assert dev.blockDim == 384
    top = top_tiling(dev)
    assert top.warp_name is None
    n_cta = loop(top, "n_cta", 2, 4 * cuda_cta_in_cluster_strided(2), dev)
    m_cta = loop(n_cta, "m_cta", 4, cuda_cta_in_cluster, dev)
    cons, name = tile_warps(m_cta, CudaWarps(name="consumer"), dev, m_cta.warp_name)
    assert name == "consumer"
    wg = loop(cons, "wg", 2, cuda_warpgroup, dev)
    t = loop(wg, "t", 128, cuda_thread, dev)
    assert t.describe() == ("(4, 768; m_cta[0,1,4,768]) x (2, 384; n_cta[0,1,2,384]) x "
                            "(384, 1; CudaWarps_consumer[128,256,1,0], "
                            "CudaWarps_None_None_consumer[0,256,1,0], wg[0,128,2,128], "
                            "t[0,1,128,1])")
    assert guards(t) == [
        ("exo_384thr_n_cta", "blockIdx.x % 2", "1"),
        ("exo_768thr_m_cta", "blockIdx.x % 8 / 2", "1"),
        ("CudaWarps_None_None_consumer", "(threadIdx.x - 128)", "1"),
        ("exo_128thr_wg", "((threadIdx.x - 128) / 128)", "1"),
        ("exo_1thr_t", "threadIdx.x % 128", "1")]
    assert [g.warp_name for g in t.guards] == [None, None, "consumer", "consumer", "consumer",
                                              "consumer"]
    assert thread_set(t, {"n_cta": 1, "m_cta": 2, "wg": 1, "t": 5}, dev) == {2181}
    ranks = {n // 384 for n in thread_set(n_cta, {"n_cta": 1}, dev)}
    assert ranks == {1, 3, 5, 7}
    assert matches_unit(wg, cuda_warpgroup, dev) is None
    assert matches_unit(t, cuda_thread, dev) is None
    assert matches_unit(t, cuda_warp, dev) is not None


@pytest.mark.rule("COLL-2.4")
@pytest.mark.rule("COLL-2.5")
def test_c6_odd_sizes() -> None:
    dev = CudaDeviceFunction(blockDim=256)
    x = loop(top_tiling(dev), "x", 10, 23 * cuda_thread, dev)
    y = loop(x, "y", 20, cuda_thread, dev)
    assert y.describe() == "(256, 1; x[0,23,10,23], y[0,1,20,1])"
    assert guards(y) == [("exo_23thr_x", "threadIdx.x / 23", "exo_23thr_x < 10"),
                         ("exo_1thr_y", "threadIdx.x % 23", "exo_1thr_y < 20")]
    assert thread_set(y, {"x": 9, "y": 19}, dev) == {226}
    active = set().union(*(thread_set(y, {"x": a, "y": b}, dev)
                           for a in range(10) for b in range(20)))
    assert len(active) == 200
    assert not active & set(range(230, 256))
    assert pow2_alignment(x) == 1


@pytest.mark.rule("COLL-1.11")
@pytest.mark.rule("COLL-2.2")
def test_c7_quadpairs_inside_warps() -> None:
    dev = CudaDeviceFunction(blockDim=64)
    w = loop(top_tiling(dev), "w", 2, cuda_warp, dev)
    q = loop(w, "q", 4, cuda_quadpair, dev)
    assert q.describe() == "(4, 16; w[0,2,2,32]) x (16, 1; q[0,4,4,4])"
    assert guards(q) == [("exo_32thr_w", "threadIdx.x / 32", "1"),
                         ("exo_4thr_q", "threadIdx.x % 16 / 4", "1")]
    assert thread_set(q, {"w": 1, "q": 1}, dev) == {36, 37, 38, 39, 52, 53, 54, 55}
    assert matches_unit(q, cuda_quadpair, dev) is None
    assert matches_unit(q, 8 * cuda_thread, dev) is not None
    i = loop(q, "i", 2, 4 * cuda_thread, dev)
    assert guards(i)[-1] == ("exo_16thr_i", "threadIdx.x % 32 / 16", "1")
    assert thread_set(i, {"w": 1, "q": 1, "i": 1}, dev) == {52, 53, 54, 55}
    dev512 = CudaDeviceFunction(blockDim=512)
    wg = loop(top_tiling(dev512), "wg", 4, cuda_warpgroup, dev512)
    with pytest.raises(RejectedInput, match="ambiguous dimension to tile"):
        loop(wg, "q", 4, cuda_quadpair, dev512)


@pytest.mark.rule("COLL-1.11")
@pytest.mark.rule("COLL-3.1")
def test_c8a_warpgroup_alignment() -> None:
    dev = CudaDeviceFunction(blockDim=256)
    bad, _ = tile_warps(top_tiling(dev), CudaWarps(1, 5), dev, "")
    wg = loop(bad, "wg", 1, cuda_warpgroup, dev)
    assert guards(wg)[-1] == ("exo_0thr_wg", "0", "1")
    text = matches_unit(wg, cuda_warpgroup, dev)
    assert text == ("thread alignment issue with CudaWarps_1_5_-loop: with thread_pitch=0, "
                    "offset=32, box=128, offset or box wasn't divisible by 128")
    with pytest.raises(RejectedInput, match="wrong collective unit") as exc:
        require_unit(wg, cuda_warpgroup, dev, "wgmma_instr")
    assert exc.value.code == "ERR-A19"
    good, _ = tile_warps(top_tiling(dev), CudaWarps(4, 8), dev, "")
    assert matches_unit(loop(good, "wg", 1, cuda_warpgroup, dev), cuda_warpgroup, dev) is None


@pytest.mark.rule("COLL-2.3")
def test_c9_partial_domain_unit_and_loose_body() -> None:
    dev = CudaDeviceFunction(blockDim=384)
    x = loop(top_tiling(dev), "x", 8, CollUnit((8,), (1,)), dev)
    y = loop(x, "y", 3, 128 * cuda_thread, dev)
    z = loop(y, "z", 16, cuda_thread, dev)
    assert guards(z) == [("exo_1thr_x", "threadIdx.x % 8", "1"),
                         ("exo_128thr_y", "threadIdx.x / 128", "1"),
                         ("exo_8thr_z", "threadIdx.x / 8 % 16", "1")]
    assert y.box == (16, 1)
    assert thread_set(y, {"x": 3, "y": 1}, dev) == frozenset(range(128 + 3, 256, 8))


@pytest.mark.rule("COLL-2.4")
@pytest.mark.rule("COLL-2.3")
@pytest.mark.rule("COLL-1.10")
@pytest.mark.rule("COLL-1.3")
def test_c13_error_cases() -> None:
    dev = CudaDeviceFunction(blockDim=512)
    wg = loop(top_tiling(dev), "wg", 4, cuda_warpgroup, dev)
    with pytest.raises(RejectedInput, match="not enough threads available; max_tile_count=3"
                       ) as exc:
        loop(wg, "a", 4, 40 * cuda_thread, dev)
    assert exc.value.code == "ERR-A21"
    assert exc.value.message.startswith("Failed to compile for a in cuda_threads(")
    with pytest.raises(RejectedInput, match="not enough threads available"):
        loop(wg, "a", 4, 2 * cuda_warpgroup, dev)
    with pytest.raises(RejectedInput, match="ambiguous dimension to tile"):
        loop(wg, "a", 4, cuda_quadpair, dev)
    w = loop(wg, "w", 4, cuda_warp, dev)
    with pytest.raises(RejectedInput, match="trivial tiling") as exc:
        tile_warps(w, CudaWarps(2, 4), dev, w.warp_name)
    assert "failed to compile CudaWarps(2, 4)" in exc.value.message
    dev96 = CudaDeviceFunction(blockDim=96)
    with pytest.raises(RejectedInput, match="blockDim / 64 has divisibility issue") as exc:
        loop(top_tiling(dev96), "a", 1, CollUnit((blockDim / 64, 64), (blockDim / 64, 1)), dev96)
    assert exc.value.code == "ERR-A21"
    dev256 = CudaDeviceFunction(blockDim=256)
    x = loop(top_tiling(dev256), "x", 10, 23 * cuda_thread, dev256)
    with pytest.raises(RejectedInput, match=r"Domain completion for \(256,\) and \(8,\) failed: "
                                            r"8 doesn't divide 23"):
        loop(x, "a", 2, CollUnit((8,), (1,)), dev256)


@pytest.mark.rule("COLL-6.3")
@pytest.mark.rule("COLL-6.2")
def test_upstream_defect_a_is_rejected() -> None:
    dev = CudaDeviceFunction(blockDim=128)
    i0 = loop(top_tiling(dev), "i0", 2, 4 * cuda_thread, dev)
    with pytest.raises(RejectedInput, match="tiling model disagrees with generated guards") as exc:
        loop(i0, "i1", 2, CollUnit((8,), (1,)), dev)
    assert exc.value.code == "ERR-V08" and exc.value.rule == "COLL-6.2"
    assert "thread n=" in exc.value.message and "i0=" in exc.value.message


@pytest.mark.rule("COLL-6.3")
def test_upstream_defect_b_is_rejected() -> None:
    dev = CudaDeviceFunction(blockDim=128)
    w, _ = tile_warps(top_tiling(dev), CudaWarps(3, 4), dev, "")
    with pytest.raises(RejectedInput, match="tiling model disagrees") as exc:
        loop(w, "k", 1, cuda_threads_strided(1, 64), dev)
    assert exc.value.code == "ERR-V08"
    assert "thread n=96" in exc.value.message


@pytest.mark.rule("COLL-6.3")
@pytest.mark.rule("COLL-3.3")
def test_upstream_defect_c_false_positive_matches() -> None:
    dev = CudaDeviceFunction(blockDim=256)
    t = loop(top_tiling(dev), "t", 256, cuda_thread, dev)
    with pytest.raises(RejectedInput, match="tiling model disagrees") as exc:
        matches_unit(t, CollUnit((blockDim / 64, 64), (blockDim / 64, 1)), dev)
    assert exc.value.code == "ERR-V08" and exc.value.rule == "COLL-3.3"
    dev32 = CudaDeviceFunction(blockDim=32)
    t = loop(top_tiling(dev32), "t", 32, cuda_thread, dev32)
    with pytest.raises(RejectedInput, match="tiling model disagrees"):
        matches_unit(t, 2 * cuda_threads_strided(1, 16), dev32)


@pytest.mark.rule("COLL-1.11")
@pytest.mark.rule("COLL-4.6")
def test_c8bc_named_warp_alignment_and_relative_expressions() -> None:
    dev = CudaDeviceFunction(warp_config=[CudaWarpConfig("abc", 7), CudaWarpConfig("xyz", 25)])
    xyz, _ = tile_warps(top_tiling(dev), CudaWarps(name="xyz"), dev, None)
    wg = loop(xyz, "wg", 3, cuda_warpgroup, dev)
    text = matches_unit(wg, cuda_warpgroup, dev)
    assert text is not None and "thread alignment issue with CudaWarps_xyz-loop" in text
    assert "offset=224" in text
    dev = CudaDeviceFunction(warp_config=[CudaWarpConfig("abc", 8), CudaWarpConfig("xyz", 24)])
    xyz, _ = tile_warps(top_tiling(dev), CudaWarps(name="xyz"), dev, None)
    wg = loop(loop(xyz, "a", 2, 9 * cuda_warp, dev), "wg", 2, cuda_warpgroup, dev)
    text = matches_unit(wg, cuda_warpgroup, dev)
    assert text is not None and "thread alignment issue with a-loop" in text
    dev = CudaDeviceFunction(warp_config=[CudaWarpConfig("abc", 16), CudaWarpConfig("xyz", 8)])
    body, _ = tile_warps(top_tiling(dev), CudaWarps(1, 4, name="xyz"), dev, None)
    assert guards(body) == [("CudaWarps_1_4_xyz", "(threadIdx.x - 512)",
                             "CudaWarps_1_4_xyz >= 32 && CudaWarps_1_4_xyz < 128")]
