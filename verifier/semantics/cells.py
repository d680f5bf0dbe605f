"""One buffer's region accesses on *cells* instead of elements (Choice M14, specs/verification.md).

Within a region, an element's checks and new history depend only on its history before the
region and on the sequence of (position, signature, collective) accesses that touch it
(SEM-2.6, SEM-4.4, SEM-4.5; batch_apply's docstring). So elements that start with the same
history and are touched by exactly the same accesses behave identically, and one
representative per class suffices.

The classes are found by coordinate compression. Over the bounding box of the buffer's
accesses, each dimension d is cut at every access box's lo and hi on d, and at every index i
where the old history ids differ between i - 1 and i on d (for any value of the other
coordinates inside the box). The cuts make a grid of cells. Two elements of one cell:
  * lie on the same side of every box bound on every dimension (no cut between them), so every
    access box holds both or neither: the same accesses, in the same trace order;
  * have the same old history: a path of unit steps joins them inside the cell (change one
    coordinate at a time), and no step crosses a cut, so no step changes the history id.
The region's accesses are then expanded over cells (a box becomes the box of cells it covers,
in compressed coordinates), checked and recorded exactly as elements are, and each cell's new
history id is broadcast back to its elements. Allocations inside the region (LocalBuf) have no
old histories; their instance stays the leading key, as on the element path.

When every access is a single element, or the cells would not cut the box's element count
by `MIN_SHRINK` (a history changing at every index), the element path runs instead;
`CELLS = False` forces it (tests run both paths).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from verifier.semantics.batch import LocalBuf, Site

CELLS = True  # False: every region on elements (the differential tests run both)
MIN_SHRINK = 2  # cells are used when they number at most 1/MIN_SHRINK of the box's elements


@dataclass(eq=False)
class CellBuf:
    """A tracked buffer seen through its cell grid: `ids` holds each cell's history id; the
    qual-table cache and the collector's bookkeeping are the real buffer's."""

    real: Any  # BufInstance
    shape: tuple[int, ...]
    ids: np.ndarray

    tracked = True

    @property
    def sym(self) -> Any:
        return self.real.sym

    @property
    def mem(self) -> Any:
        return self.real.mem

    @property
    def entries(self) -> dict[Any, Any]:
        return self.real.entries

    def wrote(self, ids: Any) -> None:
        self.real.wrote(ids)


@dataclass(frozen=True)
class Grid:
    """The cells of one buffer in one region: the box they tile and each cell's extent."""

    buf: Any  # the real buffer
    cells: Any  # CellBuf | LocalBuf over the grid
    box: tuple[slice, ...]
    spans: tuple[np.ndarray, ...]  # per dimension, the length of each cell

    def write_back(self) -> None:
        """Every element takes its cell's history id (global buffers; a LocalBuf keeps none)."""
        if isinstance(self.cells, LocalBuf):
            return
        ids = self.cells.ids
        for d, span in enumerate(self.spans):
            ids = np.repeat(ids, span, axis=d)
        self.buf.ids[self.box] = ids


def compress(buf: Any, sites: list[Site]) -> tuple[Grid, list[Site]] | None:
    """The cell grid of `buf` (tracked) under `sites` (in bounds, non-empty boxes) and the
    sites on cells; None when cells would not pay (then elements are used)."""
    shape = buf.shape
    if not CELLS or not shape:
        return None
    nd = len(shape)
    if all(((h - a) == 1).all() for s in sites for a, h in zip(s.lo, s.hi)):
        return None  # single elements only: one cell per access, nothing to gain
    low = [min(int(s.lo[d].min()) for s in sites) for d in range(nd)]
    high = [max(int(s.hi[d].max()) for s in sites) for d in range(nd)]
    box = tuple(slice(a, b) for a, b in zip(low, high))
    old = None if isinstance(buf, LocalBuf) else buf.ids[box]
    cuts, cells, elements = [], 1, 1
    for d in range(nd):
        n = high[d] - low[d]
        mark = np.zeros(n + 1, dtype=bool)
        for s in sites:
            mark[s.lo[d] - low[d]] = True
            mark[s.hi[d] - low[d]] = True
        if old is not None and n > 1:  # where the old history changes along d
            change = np.diff(old, axis=d) != 0
            mark[1:n] |= change.any(axis=tuple(k for k in range(nd) if k != d))
        cuts.append(np.flatnonzero(mark))
        cells *= len(cuts[-1]) - 1
        elements *= n
    if cells * MIN_SHRINK > elements:
        return None
    ranks = []
    for d, cut in enumerate(cuts):
        rank = np.zeros(high[d] - low[d] + 1, dtype=np.int64)
        rank[cut] = np.arange(len(cut), dtype=np.int64)
        ranks.append(rank)
    cell_shape = tuple(len(c) - 1 for c in cuts)
    if isinstance(buf, LocalBuf):
        target: Any = LocalBuf(buf.sym, cell_shape, buf.mem, buf.tracked, buf.instances,
                               buf.entries)
    else:  # a cell's history is its first element's (all its elements share it)
        target = CellBuf(buf, cell_shape, old[np.ix_(*(c[:-1] for c in cuts))])
    moved = [replace(s, buf=target, lo=[r[a - o] for r, a, o in zip(ranks, s.lo, low)],
                     hi=[r[b - o] for r, b, o in zip(ranks, s.hi, low)]) for s in sites]
    return Grid(buf, target, box, tuple(np.diff(c) for c in cuts)), moved
