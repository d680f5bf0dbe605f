"""Base-thread equivalence of two tilings (COLL-1.15), in subdiv-only and raw mode.

Reads two tilings of one device function; produces None when they have the same base collective
(every control value 0), else upstream's reason ("Incompatible offsets" / "Incompatible box
size"). Raw mode compares offsets and boxes as they are (barriers, COLL-5.10); subdiv-only mode
needs unit-completed tilings and ignores intact axes (data allocations, COLL-5.7).
`confirm_same_base` checks an algebraic "same" verdict on the ground-truth thread sets.
Non-goals: which statements must agree (the caller's rule), index consumption (distributed.py).
"""

from __future__ import annotations

from verifier.collectives.completion import CompletionError, complete
from verifier.collectives.membership import thread_set
from verifier.collectives.tiling import Tiling, base_box, linear_base_offset
from verifier.collectives.validate import DISAGREE
from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib.config import CudaDeviceFunction


def base_mismatch(first: Tiling, second: Tiling, *, subdiv_only: bool) -> str | None:
    """None if `first` and `second` have the same base collective, else the reason.

    Linear base offsets must be equal; then each domain is completed toward the other (no
    partial sources) and the translated base boxes must be equal. Rules: COLL-1.15
    """
    off1 = linear_base_offset(first, subdiv_only)
    off2 = linear_base_offset(second, subdiv_only)
    if off1 != off2:
        return f"Incompatible offsets: base offset {off1} != {off2}"
    try:
        to_second = complete(first.domain, second.domain, False)
        to_first = complete(second.domain, first.domain, False)
        box1 = to_second.translate_box(base_box(first, subdiv_only))
        box2 = to_first.translate_box(base_box(second, subdiv_only))
    except CompletionError as err:
        return f"Incompatible box size: {err.message}"
    if box1 != box2:
        return f"Incompatible box size: {box1} != {box2}"
    return None


def base_threads(t: Tiling, dev: CudaDeviceFunction) -> frozenset[int]:
    """Ground-truth threads of the instance with every cuda_threads iterator 0 (COLL-6.1)."""
    return thread_set(t, {g.iter_key: 0 for g in t.iter_guards()}, dev)


def confirm_same_base(first: Tiling, second: Tiling, dev: CudaDeviceFunction) -> None:
    """An algebraic raw-mode match must hold on the guards: the base instances execute the
    same threads, else `ERR-V08` (the model is not trusted without it). Rules: COLL-1.15,
    COLL-6.2
    """
    a, b = base_threads(first, dev), base_threads(second, dev)
    if a != b:
        n = min(a ^ b)
        raise RejectedInput(f"{DISAGREE}: the tilings {first.describe()} and "
                            f"{second.describe()} have the same base collective, but thread "
                            f"n={n} executes only one of their base instances", code="ERR-V08",
                            rule="COLL-1.15")
