"""Lowering of split barriers that need no storage: commit groups and cluster sync.

Reads an `Arrive`/`Await` statement, the barrier's mechanism and the first sync-tl of the
Arrives on that barrier (from the plan); produces PTX lines. Commit groups map one-to-one onto
the hardware's per-thread async-group queue (SEM-8.4), so barrier indices (all distributed,
COLL-5.9) lower to nothing. `CudaMbarrier` rings (SEM-8.5) are lowered by `mbarrier.py`;
`CudaEvent` is refused as `Unsupported` by the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from verifier.diagnostics import InternalError, SrcLoc, Unsupported
from verifier.lang.stdlib.memories import (
    BarrierMechanism,
    CudaClusterSync,
    CudaCommitGroup,
    CudaMbarrier,
)
from verifier.lang.stdlib.timelines import SyncTL

# SEM-8.4: the lowered type of a commit group follows the first sync-tl of its Arrives
# (LANG-5.20: ⊑ Sm80_cp_async, ⊑ tma_to_gmem_async, or ⊑ wgmma_async).
COMMIT_GROUP_ROWS: Mapping[SyncTL, tuple[str, str]] = MappingProxyType({
    SyncTL.Sm80_cp_async: ("cp.async.commit_group;", "cp.async.wait_group {n};"),
    SyncTL.tma_to_gmem_async: ("cp.async.bulk.commit_group;", "cp.async.bulk.wait_group {n};"),
    SyncTL.wgmma_async: ("wgmma.commit_group.sync.aligned;",
                         "wgmma.wait_group.sync.aligned {n};"),
    SyncTL.wgmma_async_smem: ("wgmma.commit_group.sync.aligned;",
                              "wgmma.wait_group.sync.aligned {n};"),
    SyncTL.wgmma_fence_2: ("wgmma.commit_group.sync.aligned;",
                           "wgmma.wait_group.sync.aligned {n};"),
})

SUPPORTED_MECHANISMS = (CudaCommitGroup, CudaClusterSync, CudaMbarrier)


def _asm(text: str) -> str:
    return f'asm volatile("{text}" ::: "memory");'


def _row(first: SyncTL, loc: SrcLoc | None) -> tuple[str, str]:
    try:
        return COMMIT_GROUP_ROWS[first]
    except KeyError:
        raise InternalError(f"commit group arrived with {first}: no lowered type (SEM-8.4)",
                            loc) from None


def arrive_lines(mech: BarrierMechanism, first: SyncTL, wait_all: bool,
                 loc: SrcLoc | None) -> list[str]:
    """`Arrive(first) >> b`: commit_group, or [cp.async.wait_all] cluster arrive.
    Rules: SEM-8.3, SEM-8.4"""
    if mech == CudaCommitGroup:
        return [_asm(_row(first, loc)[0])]
    if mech == CudaClusterSync:
        head = [_asm("cp.async.wait_all;")] if wait_all else []
        return head + [_asm("barrier.cluster.arrive.aligned;")]
    raise Unsupported(f"codegen of {mech} barriers is not supported yet", loc, code="ERR-V11",
                      rule="SEM-8.5")


def await_lines(mech: BarrierMechanism, arrive_first: SyncTL | None, n: int, proxy: bool,
                loc: SrcLoc | None) -> list[str]:
    """`Await(b, second, n)`: wait_group n (then `__syncwarp()` for TMA stores: the copies
    were issued by one elected lane), or cluster wait [fence.proxy.async]. Rules: SEM-8.3,
    SEM-8.4, SEM-8.6"""
    if arrive_first is None:
        raise InternalError("Await on a barrier that no Arrive targets", loc)
    if mech == CudaCommitGroup:
        if n < 0:
            raise InternalError(f"commit-group Await with N = {n} < 0", loc)
        lines = [_asm(_row(arrive_first, loc)[1].format(n=n))]
        if arrive_first == SyncTL.tma_to_gmem_async:
            # One elected lane issued the bulk copies and owns the group; the other lanes of
            # the warp are ordered after its wait.
            lines.append("__syncwarp();")
        return lines
    if mech == CudaClusterSync:
        tail = [_asm("fence.proxy.async;")] if proxy else []
        return [_asm("barrier.cluster.wait.aligned;")] + tail
    raise Unsupported(f"codegen of {mech} barriers is not supported yet", loc, code="ERR-V11",
                      rule="SEM-8.5")
