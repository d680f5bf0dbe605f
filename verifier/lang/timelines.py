"""The closed sets of timelines (language.md §7.2-7.3, semantics.md §3): enums only.

Which qual-tls a sync-tl covers is a rule (SEM-3.4) and lives in `verifier.semantics.rules`.
"""

from __future__ import annotations

from enum import Enum


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

    def __str__(self) -> str:
        return self.value


CPU_INSTR_TLS = frozenset({InstrTL.cpu_in_order_instr, InstrTL.cpu_cuda_stream_instr})
CUDA_INSTR_TLS = frozenset(set(InstrTL) - CPU_INSTR_TLS)
