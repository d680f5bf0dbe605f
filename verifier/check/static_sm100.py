"""Static rules of the Blackwell tcgen05 synchronization (specs/blackwell.md BW-C1, BW-S2..S4):
which sync-tls `tcgen05.commit`, `tcgen05.wait::ld` and the tcgen05 fences may take, and who
issues a commit. Called from static_barriers and static_calls where the Hopper rules would
reject a tcgen05 sync-tl, so those modules keep their own tables unchanged.
"""

from __future__ import annotations

from verifier import collectives
from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.lang.stdlib.timelines import SyncTL, implements
from verifier.lang.stdlib.units import cuda_thread
from verifier.check.sites import Context

TCGEN05_ARRIVE = frozenset({SyncTL.tcgen05_commit})
AFTER = SyncTL.tcgen05_after_thread_sync
BEFORE = SyncTL.tcgen05_before_thread_sync


def mbarrier_arrive(first: SyncTL, ctx: Context, loc: SrcLoc) -> bool:
    """BW-C1: `Arrive(tcgen05_commit) >> mbar` is tcgen05.commit, issued by one thread (the
    one that issued the MMAs it tracks). True when the Arrive is a valid commit."""
    if first not in TCGEN05_ARRIVE:
        return False
    assert ctx.device is not None
    problem = collectives.matches_unit(ctx.tiling, cuda_thread, ctx.device.cfg)
    if problem is not None:
        raise RejectedInput(f"tcgen05.commit (Arrive({first})) must be issued by one thread: "
                            f"{problem}", loc, code="ERR-BW03", rule="BW-C1")
    return True


def mbarrier_await(second: SyncTL) -> bool:
    """BW-S3: an mbarrier wait may end in tcgen05.fence::after_thread_sync."""
    return second is AFTER


def fence(first: SyncTL, second: SyncTL, loc: SrcLoc) -> bool:
    """BW-S2..S4: the Fences that lower to tcgen05 instructions. True when the fence is one;
    False leaves it to the Hopper rules (LANG-5.20)."""
    if first is SyncTL.tcgen05_ld or first is SyncTL.tcgen05_st:
        if second is not SyncTL.cuda_in_order:
            raise RejectedInput(f"tcgen05.wait (Fence({first}, ...)) needs second sync-tl "
                                f"cuda_in_order, not {second}", loc, code="ERR-BW04",
                                rule="BW-S2")
        return True
    if first is BEFORE or second is AFTER:
        if not (first is BEFORE or implements(first, SyncTL.Sm80_generic)) or \
                not (second is AFTER or implements(second, SyncTL.cuda_generic_and_async_proxy)):
            raise RejectedInput(f"Fence({first}, {second}): a tcgen05 thread-sync fence takes "
                                "tcgen05_before_thread_sync or at most Sm80_generic first, and "
                                "tcgen05_after_thread_sync or at most "
                                "cuda_generic_and_async_proxy second", loc, code="ERR-BW04",
                                rule="BW-S4")
        return True
    return False
