"""The static view of a proc that the encoder quantifies over: access, sync and free sites.

Each site records its enclosing loops, path conditions, textual position, device function,
collective tiling and the rule-table attributes of its accesses. Built by `verifier.semantics.
static.analyze` during the static checks; plain data, no Z3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.lang.stdlib.config import CudaDeviceFunction
from verifier.lang.stdlib.memories import Memory
from verifier.lang.stdlib.timelines import QualTL, SyncTL
from verifier.semantics.rules import AccessKind, QualEntry


@dataclass(frozen=True)
class Loop:
    sym: ir.Sym
    lo: ir.Expr
    hi: ir.Expr
    kind: str  # seq | task | threads
    loc: SrcLoc


@dataclass(frozen=True)
class Device:
    """One static `with CudaDeviceFunction` and the loops enclosing it (its instances)."""

    index: int
    cfg: CudaDeviceFunction
    outer_loops: tuple[ir.Sym, ...]
    task_loops: tuple[ir.Sym, ...]
    loc: SrcLoc


@dataclass(frozen=True)
class Context:
    loops: tuple[Loop, ...] = ()
    conds: tuple[tuple[ir.Expr, bool], ...] = ()
    path: tuple[int, ...] = ()
    device: Device | None = None
    tiling: Any = None
    thread_iters: tuple[ir.Sym, ...] = ()
    warp_name: str | None = None

    @property
    def cuda(self) -> bool:
        return self.device is not None


@dataclass(frozen=True)
class Element:
    """The element(s) an access touches: one index expression per dimension; a window
    dimension is an interval [lo, hi) over which a fresh element variable ranges.

    Clipping (SEM-4.3): `clip_to_shape` intersects the window with the tensor (tensor-map
    windows); `limits[k]`, when given, keeps only elements with index - lo < limits[k] on
    dimension k (the bounds-predicated wgmma stores)."""

    points: tuple[ir.Expr | None, ...]
    intervals: tuple[tuple[ir.Expr, ir.Expr] | None, ...]
    clip_to_shape: bool = False
    limits: tuple[ir.Expr | None, ...] = ()


@dataclass(frozen=True)
class Trailing:
    """`instr(...) >> z[e]`: the elements a TMA's records are tagged with (SEM-4.4 P₀, SEM-6.5):
    a point expression per dimension, None for an interval (every element of the dimension)."""

    barrier: ir.Sym
    points: tuple[ir.Expr | None, ...]
    loc: SrcLoc
    numbered_zero: bool = False  # a ring handoff's tag names arrive #0 of its element (DIAL-6)


@dataclass(frozen=True)
class AccessSite:
    id: int
    buf: ir.Sym
    mem: Memory
    shape: tuple[ir.Expr, ...]
    element: Element
    kind: AccessKind
    qual: QualEntry
    convergent: bool
    out_of_order: bool
    atomic_quals: frozenset[QualTL]
    ctx: Context
    loc: SrcLoc
    tracked: bool
    alloc_loops: tuple[ir.Sym, ...]  # loops enclosing the allocation (same instance ⇔ equal)
    is_free: bool = False
    single_thread: bool = True
    trailing: Trailing | None = None  # records tagged by a trailing barrier (SEM-6.5)


@dataclass(frozen=True)
class FenceSite:
    id: int
    first: SyncTL
    second: SyncTL
    ctx: Context
    loc: SrcLoc


@dataclass(frozen=True)
class TmaSite:
    """A TMA load with its transaction accounting (SEM-8.6, TX-1): executed by `ctx`; in
    `issuer_ctx` the callee-distributed iterator (COLL-5.12) is a thread loop, so each issuing
    CTA's instance names its own element `own` of the trailing barrier, while `dest` (with
    `dest_sym` free over [0, ncta)) names each destination CTA's element."""

    id: int
    call: ir.Call
    ctx: Context
    issuer_ctx: Context
    trailing: Trailing
    own: tuple[ir.Expr, ...]
    dest_sym: ir.Sym | None
    ncta: int
    expect_bytes: int  # on the issuer's own mbarrier, as the instr computes it
    delivered_bytes: int  # by one issuer to one destination, at the tensor's element size
    loc: SrcLoc


@dataclass(frozen=True)
class ReleaseSite:
    """An early release (`lang/ir/lifetimes.py`): the SEM-4.7 free check of `site.buf` at a point
    before the end of its block, just before the statement at `site.loc`. Its obligations go
    to codegen (CG-R1), never into the proc's verdict."""

    id: str  # EarlyRelease.id
    site: AccessSite  # is_free, its path just after the statement before the release point


@dataclass
class ProgramModel:
    proc: ir.Proc
    sizes: tuple[ir.Sym, ...]
    accesses: list[AccessSite] = field(default_factory=list)
    fences: list[FenceSite] = field(default_factory=list)
    devices: list[Device] = field(default_factory=list)
    shapes: dict[ir.Sym, tuple[ir.Expr, ...]] = field(default_factory=dict)
    barriers: dict[ir.Sym, "BarrierDecl"] = field(default_factory=dict)
    arrives: list["ArriveSite"] = field(default_factory=list)
    awaits: list["AwaitSite"] = field(default_factory=list)
    tmas: list[TmaSite] = field(default_factory=list)
    releases: list[ReleaseSite] = field(default_factory=list)  # not in `accesses`
    # DIAL-18: handoff shadows of data rings, whose records only order (as ring storage)
    ordering: set[ir.Sym] = field(default_factory=set)


@dataclass(frozen=True)
class BarrierDecl:
    """A barrier allocation: mechanism, constant shape, guard, and where it lives and dies.
    An endgame ring barrier (DIAL-2) has `ring`: `shape` holds its depth on the ring dimension
    (the physical slots) and `ring_extent` the logical extent there (an expression of sizes)."""

    sym: ir.Sym
    mech: Any
    shape: tuple[int, ...]
    guarded_by: ir.Sym | None
    ctx: Context
    free_ctx: Context
    loc: SrcLoc
    alloc_loops: tuple[ir.Sym, ...]
    ring: ir.RingDim | None = None
    ring_extent: ir.Expr | None = None
    pre_arrive: int = 0
    spelled: str = ""  # the mechanism's endgame name, for messages

    @property
    def mech_name(self) -> str:
        return self.spelled or str(self.mech)

    def logical_shape(self, loc: SrcLoc) -> tuple[ir.Expr, ...]:
        """The extents as the program indexes them (the ring dimension's logical extent)."""
        out = [ir.Const(d, loc) for d in self.shape]
        if self.ring is not None:
            assert self.ring_extent is not None
            out[self.ring.dim] = self.ring_extent
        return tuple(out)


@dataclass(frozen=True)
class ArriveSite:
    """`Arrive(τ1) >> z[e1] >> ...`: tags witnessed records with every element it names and
    increments the home element only (SEM-6.1, 6.3). `named` holds one entry per barrier
    expression: a point expression per dimension, None for a multicast interval."""

    id: int
    barrier: ir.Sym
    first: SyncTL
    home: tuple[ir.Expr, ...]
    ctx: Context
    loc: SrcLoc
    named: tuple[tuple[ir.Expr | None, ...], ...] = ()
    # BW-5.5: a tcgen05.commit on behalf of CTAs that do not execute it (rules.commit_on_behalf);
    # each_element: it multicasts, one arrival counted at every element it names
    on_behalf: bool = False
    each_element: bool = False

    @property
    def multicast(self) -> bool:
        return any(p is None for ref in self.named for p in ref)


@dataclass(frozen=True)
class AwaitSite:
    """`Await(z[elem], τ2, N)` (SEM-6.4)."""

    id: int
    barrier: ir.Sym
    second: SyncTL
    n: int
    element: tuple[ir.Expr, ...]
    ctx: Context
    loc: SrcLoc
