"""Distinct values of integer arrays, the batched machine's most frequent numpy step.

Ids, keys and element offsets are mostly dense: their distinct values are found by marking a
table over [min, max] (two passes over the array, no sort and no hashing), and only a sparse
array falls back to sorting (`np.unique`). numpy's hashing `unique_values` measured several
times slower than marking on the machine's boxes, sorting slower still. The sorting fallbacks
are written out rather than `np.unique`, whose first call imports numpy.ma (a cost each
machine run would pay).
"""

from __future__ import annotations

import numpy as np

_EMPTY = np.zeros(0, dtype=np.int64)


def _dense(a: np.ndarray) -> tuple[int, int] | None:
    lo = int(a.min())
    span = int(a.max()) - lo + 1
    return (lo, span) if span <= 4 * a.size + 4096 else None


def unique_values(a: np.ndarray) -> np.ndarray:
    """The distinct values of the integer array `a`, increasing."""
    a = a.reshape(-1)
    if not a.size:
        return _EMPTY
    dense = _dense(a)
    if dense is None:
        return unique_first(a)[0]
    lo, span = dense
    seen = np.zeros(span, dtype=bool)
    seen[a - lo if lo else a] = True
    out = np.flatnonzero(seen)
    return out + lo if lo else out


def unique_inverse(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values increasing, the position of each element's value among them)."""
    a = a.reshape(-1)
    if not a.size:
        return _EMPTY, _EMPTY
    dense = _dense(a)
    if dense is None:
        uniq, _, inv = unique_first(a)
        return uniq, inv
    lo, span = dense
    off = a - lo if lo else a
    seen = np.zeros(span, dtype=bool)
    seen[off] = True
    uniq = np.flatnonzero(seen)
    rank = np.empty(span, dtype=np.int64)
    rank[uniq] = np.arange(len(uniq), dtype=np.int64)
    return (uniq + lo if lo else uniq), rank[off]


def unique_first(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """By sorting: (distinct values increasing, the index of each one's first occurrence, the
    position of each element's value among them)."""
    a = a.reshape(-1)
    if not a.size:
        return _EMPTY, _EMPTY, _EMPTY
    order = np.argsort(a, kind="stable")
    ordered = a[order]
    first = np.ones(a.size, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    inv = np.empty(a.size, dtype=np.int64)
    inv[order] = np.cumsum(first) - 1
    return ordered[first], order[first], inv
