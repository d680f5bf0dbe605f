"""Collective tilings (COLL-1.7..1.9, 1.11, 2.10): the static thread-set model of a scope.

Reads concrete device-function configs; produces immutable `Tiling` values: axes (extent,
pitch, operators, dimension index expression, label), the guards generated on the path, and
the codegen record of the construct that created the tiling. Non-goals: deriving body tilings
(derive.py), membership formulas (membership.py), validation against guards (validate.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from math import prod

from verifier.collectives.completion import CompletionError
from verifier.collectives.index_expr import IndexExpr
from verifier.lang.stdlib.config import CudaDeviceFunction


class Label(Enum):
    """Expectation of an axis after unit completion (COLL-1.13)."""

    AGNOSTIC = "agnostic"
    INTACT = "intact"
    SUBDIV = "subdiv"


@dataclass(frozen=True, slots=True)
class DimOp:
    """One operator on an axis: (y, o, b, t, iota, p, d) in coordinate units of its axis.

    `iter_key` is None for `CudaWarps` dummies (always 0). Rules: COLL-1.7
    """

    iter_key: object | None
    iter_name: str
    offset: int
    box: int
    tile_count: int
    intra: IndexExpr
    thread_pitch: int
    depth: int


@dataclass(frozen=True, slots=True)
class Axis:
    """A dimension descriptor (D_m, P_m, ops_m, e_m, label). Rules: COLL-1.7"""

    extent: int
    pitch: int
    ops: tuple[DimOp, ...]
    expr: IndexExpr
    label: Label = Label.AGNOSTIC

    @property
    def box(self) -> int:
        """Box of the last op, or the extent. Rules: COLL-1.8"""
        return self.ops[-1].box if self.ops else self.extent

    @property
    def leaf_intra(self) -> IndexExpr:
        """The last op's intra-box expression, or the dimension index expression."""
        return self.ops[-1].intra if self.ops else self.expr


@dataclass(frozen=True, slots=True)
class Guard:
    """One generated guarded block `if (int V = E; lo <= V && V < hi)` on the path.

    `iter_key` is the cuda_threads iterator (None for CudaWarps, which add no equation);
    `tile_count` is the iterator's range [0, tile_count); `warp_name` the named-warp filter;
    `discarded` marks the named-range specialisation whose codegen is replaced by the
    per-name dispatch (COLL-2.12 step 4, COLL-4.6). Rules: COLL-4.3, COLL-4.4, COLL-4.6
    """

    c_name: str
    iter_key: object | None
    expr: IndexExpr
    lo: int | None
    hi: int | None
    warp_name: str | None
    discarded: bool = False
    tile_count: int = 1
    thread_pitch: int = 0
    iter_name: str = ""

    def cond_c(self) -> str:
        """COND of the guarded block: the static bounds, or `1`. Rules: COLL-4.3"""
        parts = []
        if self.lo is not None:
            parts.append(f"{self.c_name} >= {self.lo}")
        if self.hi is not None:
            parts.append(f"{self.c_name} < {self.hi}")
        return " && ".join(parts) if parts else "1"


@dataclass(frozen=True, slots=True)
class LoopRecord:
    """Codegen record of the construct that created a tiling (COLL-1.7, COLL-2.5).

    `axis` is None for a trivial construct; `splits` are the axis splits applied first.
    """

    iter_key: object | None
    iter_name: str
    axis: int | None
    offset: int
    box: int | None
    tile_count: int
    thread_pitch: int
    splits: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Tiling:
    """A collective tiling omega with its guard path. Rules: COLL-1.7, COLL-1.8"""

    axes: tuple[Axis, ...]
    depth: int
    guards: tuple[Guard, ...]
    block_dim: int
    cluster_dim: int
    warp_name: str | None
    record: LoopRecord | None = None

    @property
    def domain(self) -> tuple[int, ...]:
        return tuple(a.extent for a in self.axes)

    @property
    def box(self) -> tuple[int, ...]:
        return tuple(a.box for a in self.axes)

    @property
    def num_threads(self) -> int:
        """N = C * B."""
        return self.block_dim * self.cluster_dim

    @property
    def box_threads(self) -> int:
        return prod(self.box)

    @property
    def labels(self) -> tuple[Label, ...]:
        return tuple(a.label for a in self.axes)

    def ops(self) -> tuple[tuple[int, DimOp], ...]:
        """(axis index, op) for every op, axis by axis."""
        return tuple((m, op) for m, a in enumerate(self.axes) for op in a.ops)

    def iter_guards(self) -> tuple[Guard, ...]:
        """Guards of cuda_threads loops (those that bind an iterator)."""
        return tuple(g for g in self.guards if g.iter_key is not None)

    def guard_of(self, key: object) -> Guard | None:
        for g in self.guards:
            if g.iter_key is not None and g.iter_key == key:
                return g
        return None

    def describe(self) -> str:
        """`(128, 1; g[0,16,8,16], t[0,1,16,1])` per axis, as in collectives.md §8."""
        parts = []
        for a in self.axes:
            ops = ", ".join(f"{op.iter_name}[{op.offset},{op.box},{op.tile_count},"
                            f"{op.thread_pitch}]" for op in a.ops)
            parts.append(f"({a.extent}, {a.pitch}" + (f"; {ops})" if ops else ")"))
        return " x ".join(parts)


def top_tiling(dev: CudaDeviceFunction) -> Tiling:
    """The device function's top-level tiling: (B, 1, threadIdx.x), preceded by
    (C, B, blockIdx.x % C) when C > 1; no ops. The current warp name is preset when only one
    warp variable exists. Rules: COLL-2.10
    """
    block, cluster = dev.blockDim, dev.clusterDim
    axes = [Axis(block, 1, (), IndexExpr.thread_idx(block))]
    if cluster > 1:
        axes.insert(0, Axis(cluster, block, (), IndexExpr.cta_rank(cluster)))
    warp_name = dev.warp_config[0].name if len(dev.warp_config) == 1 else None
    return Tiling(tuple(axes), 0, (), block, cluster, warp_name, None)


def _divided(op: DimOp, factor: int) -> DimOp:
    if op.offset % factor or op.box % factor:
        raise CompletionError(
            f"thread alignment issue with {op.iter_name}-loop: with thread_pitch="
            f"{op.thread_pitch}, offset={op.offset}, box={op.box}, offset or box wasn't "
            f"divisible by {factor}", code="ERR-A21", rule="COLL-1.11")
    return replace(op, offset=op.offset // factor, box=op.box // factor,
                   intra=op.intra.div(factor))


def split_axis(axes: tuple[Axis, ...], index: int, factor: int) -> tuple[Axis, ...]:
    """Split axis `index` by `factor` into outer (D/f, P*f) and inner (f, P) descriptors.

    Ops with box >= f (a prefix) move to the outer axis divided by f (alignment checked);
    the rest stay on the inner axis unchanged — inexact when COLL-1.12 fails, which
    validate.py detects. Rules: COLL-1.11, COLL-1.12
    """
    axis = axes[index]
    outer_ops: list[DimOp] = []
    for op in axis.ops:
        if op.box < factor:
            break
        outer_ops.append(_divided(op, factor))
    inner_ops = axis.ops[len(outer_ops):]
    outer = Axis(axis.extent // factor, axis.pitch * factor, tuple(outer_ops),
                 axis.expr.div(factor))
    inner = Axis(factor, axis.pitch, inner_ops, axis.expr.mod(factor))
    return axes[:index] + (outer, inner) + axes[index + 1:]


def apply_splits(axes: tuple[Axis, ...], splits: tuple[tuple[int, int], ...]) -> tuple[Axis, ...]:
    """Apply a completion's ordered splits. Rules: COLL-1.10, COLL-1.11"""
    for index, factor in splits:
        axes = split_axis(axes, index, factor)
    return axes


def linear_base_offset(t: Tiling, subdiv_only: bool) -> int:
    """L = sum_m O_m * P_m; in subdiv-only mode intact axes count 0. Rules: COLL-1.9"""
    total = 0
    for a in t.axes:
        if subdiv_only and a.label is Label.INTACT:
            continue
        total += sum(op.offset for op in a.ops) * a.pitch
    return total


def base_box(t: Tiling, subdiv_only: bool) -> tuple[int, ...]:
    """BB_m = box of axis m; in subdiv-only mode intact axes default to D_m. Rules: COLL-1.9"""
    return tuple(a.extent if subdiv_only and a.label is Label.INTACT else a.box for a in t.axes)


def pow2_alignment(t: Tiling) -> int:
    """Largest power of two dividing N and every P_m*o, P_m*b. Rules: COLL-1.9"""
    values = [t.num_threads] + [v * a.pitch for a in t.axes for op in a.ops
                                for v in (op.offset, op.box) if v]
    align = 1
    while all(v % (align * 2) == 0 for v in values):
        align *= 2
    return align


def map_iterators(t: Tiling, rename: Callable[[object], object]) -> Tiling:
    """t with every cuda_threads iterator key (ops, guards, record) replaced by `rename(key)`;
    None (a CudaWarps dummy) stays None."""
    def key(k: object | None) -> object | None:
        return None if k is None else rename(k)

    axes = tuple(replace(a, ops=tuple(replace(op, iter_key=key(op.iter_key)) for op in a.ops))
                 for a in t.axes)
    guards = tuple(replace(g, iter_key=key(g.iter_key)) for g in t.guards)
    record = None if t.record is None else replace(t.record, iter_key=key(t.record.iter_key))
    return replace(t, axes=axes, guards=guards, record=record)


def by_position(t: Tiling) -> tuple[Tiling, tuple[object, ...]]:
    """t with its iterator keys replaced by their positions (0, 1, ... in order of first
    appearance over the guards, the ops and the record) and the keys in that order. The
    tilings of loops that differ only in the iterator they bind (each phase of an unrolled
    kernel binds a fresh one) become one value, so the checks cached by tiling are done once:
    their answers look the keys up only in maps built from the same tiling."""
    hit = _POSITIONS.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    keys: dict[object, int] = {}
    for k in [g.iter_key for g in t.guards] + [op.iter_key for a in t.axes for op in a.ops] + \
            [t.record.iter_key if t.record is not None else None]:
        if k is not None and k not in keys:
            keys[k] = len(keys)
    out = map_iterators(t, keys.__getitem__), tuple(keys)
    if len(_POSITIONS) >= 4096:
        _POSITIONS.clear()
    _POSITIONS[id(t)] = (t, out)  # by identity: hashing a tiling costs as much as this
    return out


# by_position's answers by the tiling's identity (the tiling is kept, so the id stays its own)
_POSITIONS: dict[int, tuple[Tiling, tuple[Tiling, tuple[object, ...]]]] = {}
