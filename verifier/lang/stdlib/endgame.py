"""Names of the July 2026 Exo-GPU dialect (upstream branch endgame) that February's lacks:
managed ring buffers and the renamed barrier mechanisms (specs/dialects.md DIAL-2, DIAL-3).

`ring_buffer_by(depth)` annotates one dimension of a barrier array (`n @ ring_buffer_by(d)`) or
of a data buffer guarded by one (`.ring_guarded_by(b)`, DIAL-18);
`CudaMbarrierPreArrive(k)` is an mbarrier whose ring elements 0..k-1 start complete; the
commit-group mechanisms are `CudaCommitGroup` with the kind (first sync-tl) fixed by the name.
These are descriptors only: the parser turns them into `ir.BarrierType` fields, the rules live
in check/, semantics/ and encode/.
"""

from __future__ import annotations

from dataclasses import dataclass

from dataclasses import replace

from verifier.lang.ir.cursor import RingExtent, ring_buffer_by  # noqa: F401 - re-exported
from verifier.lang.stdlib import units
from verifier.lang.stdlib.memories import (
    BarrierMechanism, CudaCommitGroup, CudaMbarrier, CudaRmem, Memory,
)
from verifier.lang.stdlib.timelines import SyncTL


@dataclass(frozen=True, slots=True)
class MechanismSpelling:
    """An endgame barrier mechanism: the February mechanism it behaves as, plus what the name
    fixes (pre-arrived ring elements, the commit-group kind)."""

    name: str
    mech: BarrierMechanism
    pre_arrive: int = 0
    commit_first: SyncTL | None = None

    def __str__(self) -> str:
        return self.name


def CudaMbarrierPreArrive(pre_arrive: int) -> MechanismSpelling:  # noqa: N802 - upstream's
    """An mbarrier ring whose elements 0..pre_arrive-1 are complete at allocation (DIAL-3)."""
    if not isinstance(pre_arrive, int) or isinstance(pre_arrive, bool) or pre_arrive < 0:
        raise ValueError(f"CudaMbarrierPreArrive expects an int >= 0, not {pre_arrive!r}")
    return MechanismSpelling(f"CudaMbarrierPreArrive({pre_arrive})", CudaMbarrier, pre_arrive)


Sm80_CommitGroup = MechanismSpelling("Sm80_CommitGroup", CudaCommitGroup, 0,
                                     SyncTL.Sm80_cp_async)
Sm90_TmaCommitGroup = MechanismSpelling("Sm90_TmaCommitGroup", CudaCommitGroup, 0,
                                        SyncTL.tma_to_gmem_async)
Sm90_WgmmaCommitGroup = MechanismSpelling("Sm90_WgmmaCommitGroup", CudaCommitGroup, 0,
                                          SyncTL.wgmma_async)

# Endgame's register memories: per-thread registers under their new name, and registers whose
# value is shared by aligned groups of n threads (its shards belong to n-thread units, COLL-5).
CudaRmemLinear = replace(CudaRmem, name="CudaRmemLinear", bases=CudaRmem.bases + ("CudaRmem",))


def CudaRmemUniform(n_threads: int) -> Memory:  # noqa: N802 - upstream's spelling
    """Registers holding one value per aligned group of `n_threads` threads."""
    if not isinstance(n_threads, int) or isinstance(n_threads, bool) or n_threads < 1:
        raise ValueError(f"CudaRmemUniform expects a positive int, not {n_threads!r}")
    bases = CudaRmemLinear.bases + ("CudaRmemLinear",) if n_threads == 1 else \
        ("CudaBasicDeviceVisible", "CudaDeviceVisibleLinear")
    return Memory("CudaRmemUniform", "rmem", "", "rwc", n_threads * units.cuda_thread, False,
                  True, (n_threads,), bases=bases)


ENDGAME_MECHANISMS = {m.name: m for m in (Sm80_CommitGroup, Sm90_TmaCommitGroup,
                                          Sm90_WgmmaCommitGroup)}


def base_mechanism(value: object) -> tuple[BarrierMechanism, int, SyncTL | None, str] | None:
    """(mechanism, pre-arrived elements, commit-group kind, spelling) of an `@` annotation
    that names a barrier mechanism of either dialect; None otherwise."""
    if isinstance(value, MechanismSpelling):
        return value.mech, value.pre_arrive, value.commit_first, value.name
    if isinstance(value, BarrierMechanism):
        return value, 0, None, ""
    return None


__all__ = ["ring_buffer_by", "CudaMbarrierPreArrive", "Sm80_CommitGroup", "Sm90_TmaCommitGroup",
           "Sm90_WgmmaCommitGroup", "CudaRmemLinear", "CudaRmemUniform"]
