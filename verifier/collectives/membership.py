"""Which threads execute a statement instance: Encodings A and B and the ground-truth sets.

Reads a `Tiling` and the device function; produces membership formulas over an `Arith`
(Encoding B = exactly the generated guards, COLL-7.3; Encoding A = the tiling model,
COLL-7.2) and, by evaluating Encoding B on every thread, the ground-truth thread sets
(COLL-4.4, COLL-6.1). Non-goals: solving (symbolic.py / validate.py), unit typing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import product

from verifier.collectives.arith import Arith, BoolTerm, Term
from verifier.collectives.tiling import Tiling, by_position
from verifier.diagnostics import InternalError
from verifier.lang.stdlib.config import CudaDeviceFunction


def split_thread(n: Term, t: Tiling, arith: Arith) -> tuple[Term, Term]:
    """(x, r) = (n mod B, n div B) for a local thread index n. Rules: COLL-1.1"""
    if t.cluster_dim == 1:
        return n, arith.const(0)
    return arith.mod(n, t.block_dim), arith.floordiv(n, t.block_dim)


def _iter_value(iters: Mapping[object, Term], key: object, name: str) -> Term:
    try:
        return iters[key]
    except KeyError:
        raise InternalError(f"no value given for thread iterator {name}") from None


def dispatch_range(dev: CudaDeviceFunction, warp_name: str) -> tuple[int, int]:
    """[32*off, 32*(off+count)) of a warp variable: its dispatch filter. Rules: COLL-4.6"""
    first, count = dev.warp_offset(warp_name)
    return 32 * first, 32 * (first + count)


def membership(t: Tiling, n: Term, iters: Mapping[object, Term], arith: Arith,
               dev: CudaDeviceFunction) -> BoolTerm:
    """Encoding B: Disp(x) and, per guard, sigma_y = E and the static bounds.

    Rules: COLL-4.4, COLL-7.3
    """
    x, r = split_thread(n, t, arith)
    conj: list[BoolTerm] = []
    for g in t.guards:
        if g.discarded:
            assert g.warp_name is not None
            lo, hi = dispatch_range(dev, g.warp_name)
            conj.append(arith.in_range(x, lo, hi))
            continue
        value = g.expr.to_term(x, r, arith)
        if g.iter_key is not None:
            conj.append(arith.eq(_iter_value(iters, g.iter_key, g.c_name), value))
        if g.lo is not None:
            conj.append(arith.le(arith.const(g.lo), value))
        if g.hi is not None:
            conj.append(arith.lt(value, arith.const(g.hi)))
    return arith.and_(*conj)


def model_membership(t: Tiling, n: Term, iters: Mapping[object, Term], arith: Arith,
                     dev: CudaDeviceFunction) -> BoolTerm:
    """Encoding A: for every axis m, X_m(sigma) <= coord_m(n) < X_m(sigma) + box_m.

    Rules: COLL-1.8, COLL-7.2
    """
    conj: list[BoolTerm] = []
    total = t.num_threads
    for axis in t.axes:
        coord = n if axis.pitch == 1 else arith.floordiv(n, axis.pitch)
        if axis.pitch * axis.extent != total:
            coord = arith.mod(coord, axis.extent)
        start = arith.const(0)
        for op in axis.ops:
            start = arith.add(start, arith.const(op.offset))
            if op.iter_key is not None and op.box:
                sigma = _iter_value(iters, op.iter_key, op.iter_name)
                start = arith.add(start, arith.mul(sigma, op.box))
        conj.append(arith.le(start, coord))
        conj.append(arith.lt(coord, arith.add(start, arith.const(axis.box))))
    return arith.and_(*conj)


@dataclass(frozen=True, slots=True)
class ThreadGroups:
    """Every thread passing all guards, grouped by its iterator values (Encoding B evaluated
    on [0, N)). `keys` orders the tuples; `anomalies` lists (n, text) for threads whose
    iterator value leaves [0, tile_count) or whose index expression divides a negative value
    (where C's truncation, or unsigned wrap-around of `threadIdx.x - c`, could differ from
    floor division). Rules: COLL-4.4, COLL-6.1
    """

    keys: tuple[object, ...]
    names: tuple[str, ...]
    counts: tuple[int, ...]
    groups: Mapping[tuple[int, ...], frozenset[int]]
    anomalies: tuple[tuple[int, str], ...]

    def instances(self) -> list[tuple[int, ...]]:
        """All iterator tuples in range (cartesian product of the tile counts)."""
        return list(product(*(range(c) for c in self.counts)))

    def num_instances(self) -> int:
        total = 1
        for c in self.counts:
            total *= c
        return total


def thread_groups(t: Tiling, dev: CudaDeviceFunction) -> ThreadGroups:
    """Ground-truth thread sets of every instance of `t`, computed once per tiling up to its
    iterator keys (`tiling.by_position`). Rules: COLL-4.4, COLL-6.1
    """
    hit = _GROUPS.get(id(t))
    if hit is not None and hit[0] is t and hit[1] is dev:
        return hit[2]
    renamed, keys = by_position(t)
    groups = _thread_groups(renamed, dev)
    groups = replace(groups, keys=tuple(keys[k] for k in groups.keys))  # type: ignore[index]
    if len(_GROUPS) >= 4096:
        _GROUPS.clear()
    _GROUPS[id(t)] = (t, dev, groups)  # by identity: the machine asks once per statement
    return groups


# thread_groups' answers by the tiling's identity (kept, so the id stays its own)
_GROUPS: dict[int, tuple[Tiling, CudaDeviceFunction, ThreadGroups]] = {}


@lru_cache(maxsize=512)
def _thread_groups(t: Tiling, dev: CudaDeviceFunction) -> ThreadGroups:
    block = t.block_dim
    alive = list(range(t.num_threads))
    cols: list[list[int]] = []  # per iterator guard so far, its value for each live thread
    anomalies: list[tuple[int, str]] = []
    keyed = t.iter_guards()
    for g in t.guards:
        xs = [n % block for n in alive]
        rs = [n // block for n in alive]
        if g.discarded:
            assert g.warp_name is not None
            lo, hi = dispatch_range(dev, g.warp_name)
            keep = [lo <= x < hi for x in xs]
        else:
            values = g.expr.evaluate_all(xs, rs)
            for n, fine in zip(alive, g.expr.operands_nonnegative_all(xs, rs)):
                if not fine:
                    anomalies.append((n, f"{g.c_name} = {g.expr.to_c()} divides a negative "
                                          f"value"))
            keep = [(g.lo is None or v >= g.lo) and (g.hi is None or v < g.hi) for v in values]
            if g.iter_key is not None:
                cols.append(values)
        if not all(keep):
            alive = [n for n, k in zip(alive, keep) if k]
            cols = [[v for v, k in zip(col, keep) if k] for col in cols]
    groups: dict[tuple[int, ...], set[int]] = {}
    counts = tuple(g.tile_count for g in keyed)
    keys = list(zip(*cols)) if cols else [()] * len(alive)
    in_range = all(not col or (min(col) >= 0 and max(col) < g.tile_count)
                   for g, col in zip(keyed, cols))
    for n, key in zip(alive, keys):
        if not in_range:  # the first out-of-range value of this thread, if any
            bad = [(g.c_name, v) for g, v in zip(keyed, key) if not 0 <= v < g.tile_count]
            if bad:
                anomalies.append((n, f"executes {bad[0][0]}={bad[0][1]} outside its range"))
                continue
        groups.setdefault(key, set()).add(n)
    return ThreadGroups(tuple(g.iter_key for g in keyed), tuple(g.c_name for g in keyed),
                        counts, {k: frozenset(v) for k, v in groups.items()},
                        tuple(anomalies[:8]))


def thread_set(t: Tiling, iters: Mapping[object, int], dev: CudaDeviceFunction
               ) -> frozenset[int]:
    """Local thread indices n = r*B + x executing the instance `iters` (ground truth).

    `iters` must give every cuda_threads iterator on the path (extra keys are ignored).
    Rules: COLL-4.4, COLL-6.1
    """
    tg = thread_groups(t, dev)
    key = tuple(_iter_value(iters, k, name) for k, name in zip(tg.keys, tg.names))
    return tg.groups.get(key, frozenset())


def model_thread_set(t: Tiling, iters: Mapping[object, int]) -> frozenset[int]:
    """The tiling model's set mu_omega(sigma) (Encoding A), as a cuboid enumeration.

    Rules: COLL-1.8
    """
    ranges: list[range] = []
    for axis in t.axes:
        start = sum(op.offset + (op.box * _iter_value(iters, op.iter_key, op.iter_name)
                                 if op.iter_key is not None else 0) for op in axis.ops)
        lo, hi = max(start, 0), min(start + axis.box, axis.extent)
        ranges.append(range(lo, max(lo, hi)))
    members = [0]  # the cuboid's thread numbers, one axis at a time
    for r, axis in zip(ranges, t.axes):
        members = [m + c * axis.pitch for m in members for c in r]
    return frozenset(members)
