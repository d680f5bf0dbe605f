"""The closed sets of timelines (language.md §7.2-7.3, semantics.md §3) and the sync-tl
table (SEM-3.4): data shared by the machine, the encoder and codegen (via semantics.rules).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Mapping


class QualTL(Enum):
    """Qualitative timelines (SEM-3.2), in the reference's order."""

    cpu = "cpu_in_order_qual"
    strm = "cpu_cuda_stream_qual"
    cuda1 = "cuda_in_order_rmem_qual"
    cuda2 = "cuda_in_order_ram_qual"
    Sm80 = "Sm80_cp_async_qual"
    tmaS = "tma_to_smem_async_qual"
    tmaG = "tma_to_gmem_async_qual"
    wgA = "wgmma_async_rmem_a_qual"
    wgD = "wgmma_async_rmem_d_qual"
    wgS = "wgmma_async_smem_qual"
    wg0 = "wgmma_zero_qual"
    async_ = "cuda_async_proxy_retired_qual"
    # endgame ring slot handoff (specs/dialects.md DIAL-6): in no sync-tl's sets, so no fence
    # or Arrive witnesses it; only the Await its tag names makes it visible
    slot = "mbarrier_ring_slot_qual"
    # Blackwell (specs/blackwell.md BW-4.1): upstream's names, Sm100.py / timelines.py
    tcS = "tcgen05_smem_qual"
    tcM = "tcgen05_mma_tmem_qual"
    tcC = "tcgen05_cp_tmem_qual"
    tcSh = "tcgen05_shift_qual"
    tcL = "tcgen05_ld_qual"
    tcSt = "tcgen05_st_qual"

    def __str__(self) -> str:
        return self.value


class SyncTL(Enum):
    """Synchronization timelines accepted by Fence/Arrive/Await (SEM-3.4)."""

    cpu_in_order = "cpu_in_order"
    cuda_stream_sync = "cuda_stream_sync"
    cuda_in_order = "cuda_in_order"
    cuda_temporal = "cuda_temporal"
    Sm80_cp_async = "Sm80_cp_async"
    Sm80_generic = "Sm80_generic"
    tma_to_smem_async = "tma_to_smem_async"
    tma_to_gmem_async = "tma_to_gmem_async"
    wgmma_async_smem = "wgmma_async_smem"
    wgmma_fence_1 = "wgmma_fence_1"
    wgmma_fence_2 = "wgmma_fence_2"
    wgmma_async = "wgmma_async"
    cuda_generic_and_async_proxy = "cuda_generic_and_async_proxy"
    # Blackwell (BW-4.2): tcgen05.commit, tcgen05.wait::ld / ::st as upstream names them; the
    # tcgen05.fence pair under spork-verify's names (upstream has no sync-tl for them yet)
    tcgen05_commit = "tcgen05_commit"
    tcgen05_ld = "tcgen05_ld"
    tcgen05_st = "tcgen05_st"
    tcgen05_before_thread_sync = "tcgen05_before_thread_sync"
    tcgen05_after_thread_sync = "tcgen05_after_thread_sync"

    def __str__(self) -> str:
        return self.value


class InstrTL(Enum):
    """Instruction timelines (language.md §7.2)."""

    cpu_in_order_instr = "cpu_in_order_instr"
    cpu_cuda_stream_instr = "cpu_cuda_stream_instr"
    cuda_in_order_instr = "cuda_in_order_instr"
    wgmma_zero_instr = "wgmma_zero_instr"
    Sm80_cp_async_instr = "Sm80_cp_async_instr"
    tma_to_smem_async_instr = "tma_to_smem_async_instr"
    tma_to_gmem_async_instr = "tma_to_gmem_async_instr"
    wgmma_async_instr = "wgmma_async_instr"
    tcgen05_mma_instr = "tcgen05_mma_instr"
    tcgen05_cp_instr = "tcgen05_cp_instr"
    tcgen05_shift_instr = "tcgen05_shift_instr"
    tcgen05_ld_instr = "tcgen05_ld_instr"
    tcgen05_st_instr = "tcgen05_st_instr"

    def __str__(self) -> str:
        return self.value


Q = QualTL

@dataclass(frozen=True, slots=True)
class SyncSets:
    """A sync-tl's full set F and temporal set T ⊇ F (SEM-3.4)."""

    full: frozenset[QualTL]
    temporal: frozenset[QualTL]


def sync_sets(full: set[QualTL], temporal_only: set[QualTL] = frozenset()  # type: ignore[assignment]
              ) -> SyncSets:
    return SyncSets(frozenset(full), frozenset(full) | frozenset(temporal_only))


_TCGEN05_TMEM = {Q.tcM, Q.tcC, Q.tcSh, Q.tcL, Q.tcSt}
_STREAM_FULL = {Q.strm, Q.cuda1, Q.cuda2, Q.async_, Q.Sm80, Q.tmaS, Q.tmaG, Q.wgA, Q.wgD,
                Q.wgS} | _TCGEN05_TMEM

# SEM-3.4 (canonical; language.md §7.3 repeats it). Read by semantics, encode and codegen.
SYNC_SETS: Mapping[SyncTL, SyncSets] = MappingProxyType({
    SyncTL.cpu_in_order: sync_sets({Q.cpu}),
    SyncTL.cuda_stream_sync: sync_sets(_STREAM_FULL),
    SyncTL.cuda_in_order: sync_sets({Q.cuda1, Q.cuda2}, {Q.async_, Q.wg0}),
    SyncTL.cuda_temporal: sync_sets(set(), {Q.cuda1, Q.cuda2, Q.async_, Q.wg0}),
    SyncTL.Sm80_cp_async: sync_sets({Q.Sm80}),
    SyncTL.Sm80_generic: sync_sets({Q.cuda1, Q.cuda2, Q.Sm80}, {Q.async_, Q.wg0}),
    SyncTL.tma_to_smem_async: sync_sets({Q.tmaS}),
    SyncTL.tma_to_gmem_async: sync_sets({Q.tmaG}),
    SyncTL.wgmma_async_smem: sync_sets({Q.wgS}),
    SyncTL.wgmma_fence_1: sync_sets({Q.cuda1, Q.wgA, Q.wgD}),
    SyncTL.wgmma_fence_2: sync_sets({Q.wgA, Q.wgD}),
    SyncTL.wgmma_async: sync_sets({Q.wgA, Q.wgD, Q.wgS}),
    SyncTL.cuda_generic_and_async_proxy: sync_sets({Q.cuda1, Q.cuda2, Q.async_}, {Q.wg0}),
    # BW-4.2. commit: the mbarrier arrives once every earlier tcgen05 async op of the thread is
    # complete, their SMEM operand reads included (PTX ISA "tcgen05.commit"), so after the
    # async-proxy writes the thread had seen retire before it issued them (specs/blackwell.md)
    SyncTL.tcgen05_commit: sync_sets({Q.tcM, Q.tcC, Q.tcSh, Q.tcS, Q.async_}),
    SyncTL.tcgen05_ld: sync_sets({Q.tcL}),
    SyncTL.tcgen05_st: sync_sets({Q.tcSt}),
    # BW-4.2. before_thread_sync orders (does not complete) earlier tcgen05 ops: generic
    # in-order effects fully, tcgen05.ld / st reads only temporally
    SyncTL.tcgen05_before_thread_sync: sync_sets({Q.cuda1, Q.cuda2},
                                                 {Q.async_, Q.wg0, Q.tcL, Q.tcSt}),
    # after_thread_sync: what a thread sync made visible also covers its later tcgen05 ops
    SyncTL.tcgen05_after_thread_sync: sync_sets({Q.cuda1, Q.cuda2} | _TCGEN05_TMEM,
                                                {Q.async_, Q.wg0}),
})


def implements(inner: SyncTL, outer: SyncTL) -> bool:
    """inner ⊑ outer: a mechanism realizing `outer` also realizes `inner` (SEM-3.5)."""
    a, b = SYNC_SETS[inner], SYNC_SETS[outer]
    return a.full <= b.full and a.temporal <= b.temporal


CPU_INSTR_TLS = frozenset({InstrTL.cpu_in_order_instr, InstrTL.cpu_cuda_stream_instr})
CUDA_INSTR_TLS = frozenset(set(InstrTL) - CPU_INSTR_TLS)
