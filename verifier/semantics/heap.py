"""Where the concrete machine's large temporary arrays come from (Choice M14).

A batched region allocates a few arrays of one int64 per access instance (f16_naive at 256³:
16 M instances, 128 MB each) and frees them at once. glibc serves such blocks with mmap and
unmaps them on free, so the next region faults every page in again: half of that kernel's CPU
time was system time. Raised mmap and trim thresholds keep the freed blocks in the heap for
the next region; the peak memory is the same (the arrays were live together anyway). Only
where memory comes from changes, never a result; a C library without `mallopt` is left as is.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
KEEP = 1 << 30  # blocks below this come from the heap; this much freed heap is kept


@functools.cache
def _mallopt() -> Any:
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None


def keep_freed_arrays() -> None:
    """Set the thresholds (again: another part of the verifier may have set its own)."""
    mallopt = _mallopt()
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, KEEP)
        mallopt(_M_TRIM_THRESHOLD, KEEP)
