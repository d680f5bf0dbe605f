"""Sets of global threads (semantics.md §0: g = (ι, n)) as a task and a bitmask of local
thread indices n, so that the set algebra the rules need (meet, difference, union, subset)
is a handful of integer operations instead of frozenset work per thread."""

from __future__ import annotations

from dataclasses import dataclass

ALL = -1  # the mask of every local thread (an infinite run of one bits)


@dataclass(frozen=True, slots=True)
class Threads:
    """`task=None` is every thread of every task (𝔾, CPU scope and kernel boundaries; its
    mask is ALL); otherwise bit n of `mask` is local thread n of that task's cluster."""

    task: int | None
    mask: int

    @staticmethod
    def of(task: int, ids: "frozenset[int] | range | list[int]") -> "Threads":
        mask = 0
        for n in ids:
            mask |= 1 << n
        return Threads(task, mask)

    def meets(self, other: "Threads") -> bool:
        if self.task is not None and other.task is not None and self.task != other.task:
            return False
        return (self.mask & other.mask) != 0

    def ids(self) -> tuple[int, ...]:
        """Local thread indices in increasing order (finite sets only)."""
        return mask_ids(self.mask)

    def describe(self) -> str:
        if self.task is None:
            return "all threads (CPU scope / kernel boundary)"
        ids = self.ids()
        if len(ids) > 6:
            return f"task {self.task}, threads {ids[0]}..{ids[-1]} ({len(ids)} threads)"
        return f"task {self.task}, thread{'s' if len(ids) != 1 else ''} " + \
            ", ".join(map(str, ids))


EVERYONE = Threads(None, ALL)
_IDS: dict[int, tuple[int, ...]] = {}


def mask_ids(mask: int) -> tuple[int, ...]:
    """The set bits of a finite mask, increasing; memoised (a run meets few distinct masks:
    one per collective)."""
    out = _IDS.get(mask)
    if out is None:
        bits, m = [], mask
        while m:
            low = m & -m
            bits.append(low.bit_length() - 1)
            m ^= low
        if len(_IDS) > 4096:
            _IDS.clear()
        out = _IDS[mask] = tuple(bits)
    return out
