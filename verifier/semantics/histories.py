"""Per-element histories ρ(x, i) = (R, M) (SEM-2.2) stored once per distinct value.

Every element of a tracked buffer holds a small integer naming its history in a shared table;
a history is a pair of tuples of record groups. An access to a box of elements (a window, or
one point) looks at the box's distinct histories only — usually one, since the elements of a
box were mostly written together — checks each once, and maps each to its successor (SEM-2.6)
with numpy over the box. Exact because the checks and the successor of a history depend on
the history alone, and the new records of one access are the same for every element of its
box (SEM-4.4: the record is (S(C), P₀), with nothing element-specific).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import Memory
from verifier.semantics.records import Group
from verifier.semantics.uniq import unique_inverse, unique_values

History = tuple[tuple[Group, ...], tuple[Group, ...]]  # (reads, mutates)
EMPTY = 0
Box = tuple[tuple[int, int], ...]  # [lo, hi) per dimension
STALE_GROUPS = 64  # new groups before a sync collects
COMPACT_IDS = 1 << 16  # dead history ids kept before the table is renumbered


@dataclass
class BufInstance:
    """One allocation of a variable; `ids` (tracked buffers only) names each element's
    history in the machine's `HistoryTable`."""

    sym: ir.Sym
    shape: tuple[int, ...]
    mem: Memory
    tracked: bool
    ids: Any = None
    entries: dict[Any, Any] = field(default_factory=dict)  # instr-tl -> (QualEntry, codes)
    base: str = "f32"  # element type (a TMA's transaction bytes, TX-1)
    ordering: bool = False  # endgame ring storage: its records only order (DIAL-6)
    handoff: tuple[str, int] | None = None  # a data ring's shadow: (guard, its rank) (DIAL-18)
    # what the collector knows of `ids` without reading it (HistoryTable.collect): a superset
    # of the ids it names (None: unknown), the ids written since, and the exact count last seen
    named: Any = None
    fresh: list[Any] = field(default_factory=list)
    exact: int = 0

    def __post_init__(self) -> None:
        if self.tracked:
            self.ids = np.zeros(self.shape, dtype=np.int64)

    def wrote(self, ids: Any) -> None:
        """History ids just stored into `ids` (every writer of `ids` calls this)."""
        if self.named is not None:
            self.fresh.append(ids)

    def naming(self, marks: np.ndarray) -> np.ndarray:
        """A superset of the history ids `ids` names: from what was written since the last
        collection while that stays small, else read exactly (`marks`: a zeroed scratch array
        over every id, left zeroed)."""
        if self.named is not None:
            parts = [self.named] + [np.asarray(f, dtype=np.int64).reshape(-1)
                                    for f in self.fresh]
            self.fresh = []
            if sum(len(p) for p in parts) <= 2 * self.exact + 256:
                self.named = unique_values(np.concatenate(parts))
                return self.named
        self.fresh = []
        marks[self.ids.reshape(-1)] = True
        self.named = np.flatnonzero(marks)
        marks[self.named] = False
        self.exact = len(self.named)
        return self.named


def box_slices(box: Box) -> tuple[slice, ...] | Any:
    return tuple([slice(lo, hi) for lo, hi in box]) if box else ...


def distinct(view: np.ndarray) -> tuple[list[int], np.ndarray | None]:
    """The distinct history ids of a box (in increasing order) and, when there is more than
    one, the position of each element's id among them (C order)."""
    flat = view.reshape(-1)
    first = int(flat[0])
    if flat.size == 1 or not (flat != first).any():
        return [first], None
    uniq, inv = unique_inverse(flat)
    return uniq.tolist(), inv


def elements_of(shape: tuple[int, ...], box: Box, inv: np.ndarray | None, which: list[int],
                uniq: list[int]) -> list[tuple[tuple[int, ...], int]]:
    """(index, position in `uniq`) of the box elements whose distinct history's position is
    in `which`, in C order."""
    lows = np.array([lo for lo, _ in box], dtype=np.int64)
    if inv is None:
        coords = np.indices(shape).reshape(len(shape), -1).T if shape else \
            np.zeros((1, 0), dtype=np.int64)
        ks = [0] * len(coords)
    else:
        hit = np.isin(inv, which)
        coords = np.argwhere(hit.reshape(shape))
        ks = inv[hit].tolist()
    return [(tuple((row + lows).tolist()), k) for row, k in zip(coords, ks)]


class HistoryTable:
    """Every history in use, by id; id 0 is the empty history. Ids are append-only and stable
    across collections (a dead id's slot is None) until the table is compacted, which renumbers
    every element: rarely, so that a collection need not read every element (`collect`)."""

    def __init__(self) -> None:
        self.histories: list[History | None] = [((), ())]
        self.groups: list[Group] = []  # every group created since the last collection
        self.live_before = 0
        self.interned: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
        self.live_ids = np.zeros(1, dtype=np.int64)  # ids named at the last collection
        self.checked = 1  # ids below this were added before the last collection

    def intern(self, reads: tuple[Group, ...], mutates: tuple[Group, ...]) -> int:
        """The id of this history, one id per distinct history added through here since the
        last collection (the batched machine shares histories between elements, fast.py)."""
        key = (tuple(map(id, reads)), tuple(map(id, mutates)))
        hid = self.interned.get(key)
        if hid is None:
            hid = self.interned[key] = self.add(reads, mutates)
        return hid

    def add(self, reads: tuple[Group, ...], mutates: tuple[Group, ...]) -> int:
        self.histories.append((reads, mutates))
        return len(self.histories) - 1

    def due(self) -> bool:
        return len(self.groups) > 2 * self.live_before + 1024

    def stale(self) -> bool:
        """Enough groups were created since the last collection (some may be dead) that a sync
        visiting them costs more than a collection; dead ones it visits change nothing."""
        return len(self.groups) >= self.live_before + STALE_GROUPS

    def collect(self, buffers: list[BufInstance]) -> None:
        """Mark dead every group no element names any more (SEM-2.6: dropped records) and free
        the dead histories. Dead records are unobservable: no check ever reaches them. Each
        buffer reports a superset of the ids it names (`BufInstance.naming`), so a group kept
        alive a little longer only costs time; the table is compacted when mostly dead."""
        n = len(self.histories)
        marks = np.zeros(n, dtype=bool)
        named = np.zeros(n, dtype=bool)
        named[EMPTY] = True
        for b in buffers:
            if b.ids is not None and b.ids.size:
                named[b.naming(marks)] = True
        candidates = np.concatenate([self.live_ids, np.arange(self.checked, n, dtype=np.int64)])
        for i in candidates[~named[candidates]].tolist():
            self.histories[i] = None
        self.live_ids = np.flatnonzero(named)
        self.checked = n
        for g in self.groups:
            g.alive = False
        alive: list[Group] = []
        for i in self.live_ids.tolist():
            reads, mutates = self.histories[i]  # type: ignore[misc]
            for g in reads + mutates:
                if not g.alive:
                    g.alive = True
                    alive.append(g)
        for g in self.groups:
            if not g.alive:
                for r in g.records:
                    r.co.live -= 1  # a cohort none of whose records is live is dead (M15)
                g.records = []  # breaks the group <-> record cycle: freed without the cyclic GC
        self.interned = {}
        self.groups = alive
        self.live_before = len(alive)
        if n > 4 * len(self.live_ids) + COMPACT_IDS:
            self.compact(buffers)

    def compact(self, buffers: list[BufInstance]) -> None:
        """Renumber the live histories 0..k-1 in every element (one read of every element)."""
        remap = np.zeros(len(self.histories), dtype=np.int64)
        remap[self.live_ids] = np.arange(len(self.live_ids))
        for b in buffers:
            if b.ids is not None and b.ids.size:
                b.ids[...] = remap[b.ids]
                b.named = None
                b.fresh = []
        self.histories = [self.histories[i] for i in self.live_ids.tolist()]
        self.live_ids = np.arange(len(self.histories), dtype=np.int64)
        self.checked = len(self.histories)
