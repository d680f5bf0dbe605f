"""Where the verifier's large temporary blocks come from (glibc's mmap and trim thresholds).

Two parts of the verifier free big blocks and allocate them again at once: a z3 context per
query or tiling check (several MB each, collectives/symbolic.py) and the concrete machine's
per-region instance arrays (f16_naive at 256³: 16 M instances, 128 MB each; Choice M14).
glibc serves such blocks with mmap and unmaps them on free, so the next one faults every page
in again (half of f16_naive's CPU time was system time; ~6 ms per z3 query). Raised thresholds
keep freed blocks in the heap for the next one; peak memory is the same (the blocks were live
together anyway). Only where memory comes from changes, never a result. The settings are
process-wide, so each caller asks for a floor and a threshold is only ever raised: whichever
part runs first, neither lowers the other's. A C library without `mallopt` is left as is.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
_set = {_M_MMAP_THRESHOLD: 0, _M_TRIM_THRESHOLD: 0}  # what this process has asked for so far


@functools.cache
def _mallopt() -> Any:
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None


def keep_freed_blocks(mmap_below: int, trim_above: int) -> None:
    """Serve blocks below `mmap_below` bytes from the heap and keep up to `trim_above` bytes of
    freed heap (each threshold raised to at least that, never lowered)."""
    mallopt = _mallopt()
    if mallopt is None:
        return
    for param, value in ((_M_MMAP_THRESHOLD, mmap_below), (_M_TRIM_THRESHOLD, trim_above)):
        if value > _set[param] and mallopt(param, value):
            _set[param] = value
