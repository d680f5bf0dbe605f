"""Property tests: random nests of cuda_threads / CudaWarps.

Three readings must agree on every accepted nest: the ground-truth thread sets (Encoding B
evaluated per thread), the membership formula over IntArith, and a simulation of the printed C
guards with C's truncating division. For stock units an independent interval model predicts
the thread sets and the errors exactly, and no model/guard disagreement (ERR-V08) may occur
(COLL-6.3); with strided and partial-domain units every ERR-V08 must be a real disagreement.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product
from math import prod

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.collectives import (
    IntArith,
    matches_unit,
    membership,
    model_thread_set,
    thread_set,
    tile_threads,
    tile_warps,
    top_tiling,
)
from verifier.collectives import validate
from verifier.collectives.membership import thread_groups
from verifier.collectives.tiling import Tiling
from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction, CudaWarpConfig, CudaWarps
from verifier.lang.stdlib.units import (
    CollUnit,
    cuda_cta_in_cluster,
    cuda_cta_in_cluster_strided,
    cuda_quadpair,
    cuda_thread,
    cuda_threads_strided,
    cuda_warp,
    cuda_warp_in_cluster,
    cuda_warp_in_cluster_strided,
    cuda_warpgroup,
)

MAX_INSTANCES = 1024


class CInt:
    """An int with C's `/` and `%` (truncation toward zero)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __sub__(self, other: int) -> "CInt":
        return CInt(self.value - other)

    def __truediv__(self, other: int) -> "CInt":
        quot = abs(self.value) // other
        return CInt(quot if self.value >= 0 else -quot)

    def __mod__(self, other: int) -> "CInt":
        return CInt(self.value - other * (self / other).value)


def c_value(text: str, x: int, block_idx: int) -> int:
    env = {"TX": CInt(x), "BX": CInt(block_idx)}
    value = eval(text.replace("threadIdx.x", "TX").replace("blockIdx.x", "BX"), env)  # noqa: S307
    return value.value if isinstance(value, CInt) else int(value)


def c_simulation(t: Tiling, dev: CudaDeviceFunction) -> dict[tuple[int, ...], set[int]]:
    """Run the printed guards of `t` for every thread of cluster 3 (blockIdx = 3*C + r)."""
    groups: dict[tuple[int, ...], set[int]] = {}
    for n in range(t.num_threads):
        x, r = n % t.block_dim, n // t.block_dim
        sigma: list[int] = []
        alive = True
        for g in t.guards:
            if g.discarded:
                first, count = dev.warp_offset(g.warp_name or "")
                alive = 32 * first <= x < 32 * (first + count)
            else:
                value = c_value(g.expr.to_c(), x, 3 * t.cluster_dim + r)
                cond = g.cond_c().replace(g.c_name, str(value)).replace("&&", "and")
                alive = bool(eval(cond))  # noqa: S307
                if g.iter_key is not None:
                    sigma.append(value)
            if not alive:
                break
        if alive:
            groups.setdefault(tuple(sigma), set()).add(n)
    return groups


def check_readings(t: Tiling, dev: CudaDeviceFunction) -> None:
    """Ground truth == C simulation == IntArith membership == tiling model (all instances)."""
    tg = thread_groups(t, dev)
    sim = c_simulation(t, dev)
    assert {k: frozenset(v) for k, v in sim.items()} == dict(tg.groups)
    arith = IntArith()
    instances = tg.instances()
    for sigma in instances[:3] + instances[-2:]:
        iters = dict(zip(tg.keys, sigma))
        truth = thread_set(t, iters, dev)
        assert truth == model_thread_set(t, iters)
        members = {n for n in range(t.num_threads) if membership(t, n, iters, arith, dev)}
        assert members == truth
    for sigma in instances:
        assert tg.groups.get(sigma, frozenset()) == model_thread_set(t, dict(zip(tg.keys, sigma)))


# ------------------------------------------------------------------ stock units, exact model

def stock_unit(draw: st.DrawFn, cluster: int, size: dict[str, int], wild: bool
               ) -> tuple[CollUnit, str, int]:
    """(unit, axis, box in axis units) among k*cuda_thread, k*cuda_warp, k*cuda_warpgroup and
    k*cuda_cta_in_cluster, preferring units that fit the current box."""
    choices = [("thread", 1), ("thread", 32), ("thread", 128)]
    if cluster > 1:
        choices.append(("cta", 1))
    axis, base = draw(st.sampled_from(choices))
    limit = max(size[axis] // base, 1)
    factor = draw(st.integers(1, limit + 2 if wild else limit))
    if axis == "thread" and base == 1 and not wild:
        factor = draw(st.sampled_from(sorted({1, 2, 4, 8, 16, 23, 32, factor})))
        factor = min(factor, size[axis])
    unit = {1: cuda_thread, 32: cuda_warp, 128: cuda_warpgroup}[base] if axis == "thread" \
        else cuda_cta_in_cluster
    return factor * unit, axis, base * factor


@st.composite
def stock_nests(draw: st.DrawFn) -> tuple[CudaDeviceFunction, list[tuple]]:
    """Nests that are mostly valid: each step is drawn against the current box sizes, with
    an occasional over-sized count or unit so that every error path is exercised too."""
    block = 32 * draw(st.integers(1, 32))
    cluster = draw(st.sampled_from([1, 1, 2, 4]))
    size = {"cta": cluster, "thread": block}
    steps: list[tuple] = []
    for _ in range(draw(st.integers(1, 4))):
        wild = draw(st.integers(0, 9)) == 0
        if draw(st.integers(0, 3)) == 0:
            room = max(size["thread"] // 32, 1)
            lo = draw(st.integers(0, room - 1 if not wild else room + 1))
            hi = draw(st.integers(lo + 1, max(room, lo + 1) + (2 if wild else 0)))
            steps.append(("warps", lo, hi))
            if 32 < size["thread"] and hi <= room:
                size["thread"] = 32 * (hi - lo)
            continue
        unit, axis, box = stock_unit(draw, cluster, size, wild)
        room = max(size[axis] // box, 1)
        hi = draw(st.integers(1, room + (2 if wild else 0)))
        steps.append(("threads", unit, axis, box, hi))
        if box < size[axis]:
            size[axis] = box
    return CudaDeviceFunction(blockDim=block, clusterDim=cluster), steps


def reference(dev: CudaDeviceFunction, steps: list[tuple]) -> tuple[str, object]:
    """Interval model of stock nests: ("error", keyword) or ("sets", {sigma: set})."""
    extent = {"cta": dev.clusterDim, "thread": dev.blockDim}
    size = dict(extent)
    plan: list[tuple[str, int, int, int, bool]] = []  # (axis, box, count, offset, keyed)
    for step in steps:
        if step[0] == "warps":
            _, lo, hi = step
            if 32 in (size["thread"], dev.blockDim):
                if (lo, hi) != (0, 1):
                    return "error", "trivial tiling"
                continue
            if hi * 32 > size["thread"]:
                return "error", "not enough threads available"
            plan.append(("thread", 32, 1, 32 * lo, False))
            size["thread"] = 32 * (hi - lo)
            continue
        _, _, axis, box, hi = step
        if box > extent[axis]:
            return "error", "ill-formed CollUnit"
        if box in (size[axis], extent[axis]):
            if hi != 1:
                return "error", "trivial tiling"
            plan.append((axis, 0, 1, 0, True))
            continue
        if hi * box > size[axis]:
            return "error", "not enough threads available"
        plan.append((axis, box, hi, 0, True))
        size[axis] = box
    sets: dict[tuple[int, ...], set[int]] = {}
    for sigma in product(*(range(count) for (_, _, count, _, keyed) in plan if keyed)):
        start = {"cta": 0, "thread": 0}
        values = iter(sigma)
        for axis, box, _, offset, keyed in plan:
            start[axis] += offset + (next(values) * box if keyed else 0)
        sets[sigma] = {r * dev.blockDim + x
                       for r in range(start["cta"], start["cta"] + size["cta"])
                       for x in range(start["thread"], start["thread"] + size["thread"])}
    return "sets", sets


def build(dev: CudaDeviceFunction, steps: list[tuple], validate: bool = True) -> Tiling:
    t = top_tiling(dev)
    for i, step in enumerate(steps):
        if step[0] == "warps":
            t, _ = tile_warps(t, CudaWarps(step[1], step[2]), dev, t.warp_name, validate=validate)
        else:
            t = tile_threads(t, f"i{i}", f"i{i}", 0, step[-1], step[1], dev, validate=validate)
    return t


def instance_count(steps: list[tuple]) -> int:
    return prod(s[-1] for s in steps if s[0] == "threads")


def aligned_reference(sets: list[frozenset[int]], size: int) -> bool:
    """Every set is exactly one aligned block of `size` threads."""
    return all(len(s) == size and min(s) % size == 0 and max(s) - min(s) == size - 1
               for s in sets)


def stock_property(dev: CudaDeviceFunction, steps: list[tuple]) -> None:
    if instance_count(steps) > MAX_INSTANCES:
        return
    kind, expected = reference(dev, steps)
    if kind == "error":
        with pytest.raises(RejectedInput) as exc:
            build(dev, steps)
        assert expected in exc.value.message, (exc.value.message, expected)
        assert exc.value.code != "ERR-V08"
        return
    t = build(dev, steps)
    check_readings(t, dev)
    tg = thread_groups(t, dev)
    assert isinstance(expected, dict)
    assert set(expected) == set(tg.instances())
    for sigma, members in expected.items():
        assert tg.groups.get(sigma, frozenset()) == members, (sigma, t.describe())
    sets = [tg.groups[s] for s in tg.instances()]
    block = dev.blockDim
    for unit, size in ((cuda_thread, 1), (cuda_warp, 32), (cuda_warpgroup, 128),
                       (cuda_cta_in_cluster, block)):
        aligned = block % size == 0 and aligned_reference(sets, size)
        try:
            verdict = matches_unit(t, unit, dev) is None
        except RejectedInput as err:
            # With stock units the algebra never accepts a wrong scope; it can reject a right
            # one (e.g. 33 * cuda_thread then CudaWarps(0, 1) is an aligned warp whose
            # completion fails on the 33-thread op), which COLL-3.3 reports as ERR-V08.
            assert err.code == "ERR-V08" and err.rule == "COLL-3.3", err.message
            assert aligned, (unit.name, t.describe())
            continue
        assert verdict == aligned, (unit.name, t.describe())


@pytest.mark.rule("COLL-6.3")
@pytest.mark.rule("COLL-4.4")
@pytest.mark.rule("COLL-7.3")
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(stock_nests())
def test_stock_nests_small(nest: tuple[CudaDeviceFunction, list[tuple]]) -> None:
    stock_property(*nest)


@pytest.mark.slow
@pytest.mark.rule("COLL-6.3")
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stock_nests())
def test_stock_nests_large(nest: tuple[CudaDeviceFunction, list[tuple]]) -> None:
    stock_property(*nest)


# ------------------------------------------------------------------ any unit: V08 is real

@st.composite
def any_unit(draw: st.DrawFn, cluster: int) -> CollUnit:
    factor = draw(st.sampled_from([1, 1, 2, 3, 4]))
    stride = draw(st.sampled_from([2, 4, 8, 16, 32, 64]))
    cta_stride = draw(st.sampled_from([s for s in (1, 2, 4) if s <= cluster]))
    unit = draw(st.sampled_from([
        factor * cuda_thread, factor * cuda_warp, factor * cuda_warpgroup, cuda_quadpair,
        factor * cuda_threads_strided(draw(st.sampled_from([1, 2, 4])), stride),
        CollUnit((draw(st.sampled_from([2, 4, 8, 16])),), (1,)),
        CollUnit((16,), (draw(st.sampled_from([2, 4, 8])),)),
        factor * cuda_warp_in_cluster, factor * cuda_cta_in_cluster,
        cuda_cta_in_cluster_strided(cta_stride), cuda_warp_in_cluster_strided(cta_stride)]))
    return unit


@st.composite
def any_nests(draw: st.DrawFn) -> tuple[CudaDeviceFunction, list[tuple]]:
    cluster = draw(st.sampled_from([1, 1, 2, 4]))
    if draw(st.booleans()):
        dev = CudaDeviceFunction(blockDim=32 * draw(st.integers(1, 16)), clusterDim=cluster)
    else:
        first = draw(st.integers(1, 4))
        dev = CudaDeviceFunction(warp_config=[CudaWarpConfig("a", first),
                                              CudaWarpConfig("b", draw(st.integers(1, 8)))],
                                 clusterDim=cluster)
    steps: list[tuple] = []
    if len(dev.warp_config) > 1:
        steps.append(("named", draw(st.sampled_from(["a", "b"]))))
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.integers(0, 4)) == 0:
            lo = draw(st.integers(0, 2))
            steps.append(("warps", lo, draw(st.integers(lo + 1, lo + 2))))
        else:
            hi = draw(st.one_of(st.integers(1, 4), st.integers(1, 16)))
            steps.append(("threads", draw(any_unit(cluster)), hi))
    return dev, steps


def build_any(dev: CudaDeviceFunction, steps: list[tuple]) -> str:
    """Build the nest; returns "accepted", "V08" or the first static error's code."""
    t = top_tiling(dev)
    for i, step in enumerate(steps):
        try:
            if step[0] == "named":
                t, _ = tile_warps(t, CudaWarps(name=step[1]), dev, t.warp_name)
            elif step[0] == "warps":
                t, _ = tile_warps(t, CudaWarps(step[1], step[2]), dev, t.warp_name)
            else:
                t = tile_threads(t, f"i{i}", f"i{i}", 0, step[2], step[1], dev)
        except RejectedInput as err:
            if err.code != "ERR-V08" or err.rule != "COLL-6.2":
                return err.code
            if step[0] == "named":
                raise
            if step[0] == "warps":
                bad, _ = tile_warps(t, CudaWarps(step[1], step[2]), dev, t.warp_name,
                                    validate=False)
            else:
                bad = tile_threads(t, f"i{i}", f"i{i}", 0, step[2], step[1], dev,
                                   validate=False)
            assert real_disagreement(bad, dev), bad.describe()
            return "V08"
        check_readings(t, dev)
        for unit in (cuda_thread, cuda_warp, cuda_warpgroup, cuda_quadpair):
            try:
                matches_unit(t, unit, dev)
            except RejectedInput as err:
                assert err.code == "ERR-V08", err.message
    return "accepted"


def real_disagreement(t: Tiling, dev: CudaDeviceFunction) -> bool:
    tg = thread_groups(t, dev)
    if tg.anomalies:
        return True
    return any(tg.groups.get(s, frozenset()) != model_thread_set(t, dict(zip(tg.keys, s)))
               for s in tg.instances())


@pytest.mark.rule("COLL-6.2")
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(any_nests())
def test_any_nests_small(nest: tuple[CudaDeviceFunction, list[tuple]]) -> None:
    build_any(*nest)


@pytest.mark.slow
@pytest.mark.rule("COLL-6.2")
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_nests())
def test_any_nests_large(nest: tuple[CudaDeviceFunction, list[tuple]]) -> None:
    build_any(*nest)


# ------------------------------------------------------------------ COLL-6.2: two deciders

def enumeration_matches_z3(dev: CudaDeviceFunction, steps: list[tuple]) -> None:
    """Every tiling of the nest (validation off): the enumeration, which decides small tilings
    (ENUMERATE_LIMIT), and the Z3 query give the same verdict."""
    t = top_tiling(dev)
    for i, step in enumerate(steps):
        try:
            if step[0] == "named":
                t, _ = tile_warps(t, CudaWarps(name=step[1]), dev, t.warp_name, validate=False)
            elif step[0] == "warps":
                t, _ = tile_warps(t, CudaWarps(step[1], step[2]), dev, t.warp_name,
                                  validate=False)
            else:
                t = tile_threads(t, f"i{i}", f"i{i}", 0, step[2], step[1], dev, validate=False)
        except RejectedInput:
            return
        if thread_groups(t, dev).anomalies or (not any(a.ops for a in t.axes) and not t.guards):
            continue
        for u in (t, shifted(t)):
            answer = validate._xor_query(u, dev)
            if isinstance(answer, str):
                continue  # Z3 unknown: the enumeration decides anyway
            assert (answer is None) == (validate._enumerated_disagreement(u, dev) is None), \
                u.describe()


def shifted(t: Tiling) -> Tiling:
    """`t` with its model's first op moved by one thread: the guards no longer agree."""
    for k, axis in enumerate(t.axes):
        if axis.ops:
            ops = (replace(axis.ops[0], offset=axis.ops[0].offset + 1),) + axis.ops[1:]
            axes = t.axes[:k] + (replace(axis, ops=ops),) + t.axes[k + 1:]
            return replace(t, axes=axes)
    return t


@pytest.mark.rule("COLL-6.2")
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(any_nests())
def test_enumeration_agrees_with_z3(nest: tuple[CudaDeviceFunction, list[tuple]]) -> None:
    enumeration_matches_z3(*nest)


@pytest.mark.rule("COLL-6.2")
def test_enumeration_finds_a_shifted_model() -> None:
    """A model moved off its guards is rejected whichever decider runs, with Z3's message."""
    dev = CudaDeviceFunction(blockDim=256)
    t = tile_threads(top_tiling(dev), "w", "w", 0, 8, cuda_warp, dev)
    assert validate.validation_failure(t, dev) is None
    bad = shifted(t)
    assert validate._enumerated_disagreement(bad, dev) is not None
    assert validate._xor_query(bad, dev) is not None
    assert validate.validation_failure(bad, dev).startswith(validate.DISAGREE)
