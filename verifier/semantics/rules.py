"""Rule tables of the abstract machine: data only, no Z3, no machine state.

Read by the concrete machine (`machine.py`) on concrete values and by the encoder
(`verifier.encode`) to build its formulas, so the two readings cannot drift apart.
A missing entry fails at the lookup with the rule id in the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Mapping

from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.lang.stdlib.timelines import InstrTL, QualTL, SyncTL

Q = QualTL


class Flag(Enum):
    """Visibility flags VF (semantics.md §0)."""

    atom = "atom"
    temp = "temp"
    full = "full"
    issue = "issue"


ALL_FLAGS = frozenset(Flag)
WITNESS_FLAGS = frozenset({Flag.issue, Flag.full})  # SEM-5.1


from verifier.lang.stdlib.timelines import SYNC_SETS, SyncSets, sync_sets as _sets  # noqa: E402

# SEM-1.6: the first sync-tl of the fence at kernel start.
KERNEL_START_FIRST = _sets({Q.cpu} | set(SYNC_SETS[SyncTL.cuda_stream_sync].full))
KERNEL_SYNC = SYNC_SETS[SyncTL.cuda_stream_sync]

# SEM-3.2: convergence of accesses whose initial qual-tl is q.
CONVERGENT: Mapping[QualTL, bool] = MappingProxyType({
    Q.cpu: True, Q.strm: True, Q.cuda1: True, Q.cuda2: False, Q.Sm80: False, Q.tmaS: False,
    Q.tmaG: False, Q.wgA: True, Q.wgD: True, Q.wgS: False, Q.wg0: True, Q.async_: False,
    Q.slot: False,
    # BW-4.1, as upstream's Qual_tl flags
    Q.tcS: False, Q.tcM: True, Q.tcC: True, Q.tcSh: True, Q.tcL: True, Q.tcSt: True,
})

# SEM-4.1: out-of-order (asynchronous) initial qual-tls.
OUT_OF_ORDER = frozenset({Q.Sm80, Q.tmaS, Q.tmaG, Q.wgS, Q.slot, Q.tcS})



@dataclass(frozen=True, slots=True)
class QualEntry:
    """Initial qual-tl q0 and extended set X ∋ q0 of an access (SEM-3.3)."""

    q0: QualTL
    extended: frozenset[QualTL]


# DIAL-6: the handoff of an endgame ring slot (qual-tl `slot`, a write) is seen by the slot's
# next accesses once temporally ordered before them: its phase completed, no data to read.
SLOT_ENTRY = QualEntry(Q.slot, frozenset({Q.slot}))


# DIAL-7: the arrives completing one phase of a ring slot are atomic updates of the mbarrier,
# so their recycling writes of the slot's previous element need no order among themselves.
RECYCLE_ATOMIC = frozenset({Q.cuda2, Q.Sm80})


def _e(q0: QualTL, *more: QualTL) -> QualEntry:
    return QualEntry(q0, frozenset((q0,) + more))


I = InstrTL
_RAM = {
    I.cpu_in_order_instr: _e(Q.cpu), I.cpu_cuda_stream_instr: _e(Q.strm),
    I.cuda_in_order_instr: _e(Q.cuda2), I.Sm80_cp_async_instr: _e(Q.Sm80, Q.cuda2),
    I.tma_to_smem_async_instr: _e(Q.tmaS, Q.async_),
    I.tma_to_gmem_async_instr: _e(Q.tmaG, Q.async_), I.wgmma_async_instr: _e(Q.wgS, Q.async_),
    I.tcgen05_mma_instr: _e(Q.tcS, Q.async_),  # BW-4.3: tcgen05.mma reads A, B through SMEM
    I.tcgen05_cp_instr: _e(Q.tcS, Q.async_),  # BW-7.2: tcgen05.cp reads its SMEM source so too
}
_REG = {
    I.cuda_in_order_instr: _e(Q.cuda1), I.Sm80_cp_async_instr: _e(Q.cuda1),
    I.tma_to_smem_async_instr: _e(Q.cuda1), I.tma_to_gmem_async_instr: _e(Q.cuda1),
    I.wgmma_zero_instr: _e(Q.wg0, Q.wgD),
    I.tcgen05_ld_instr: _e(Q.tcL, Q.cuda1),  # BW-4.3: tcgen05.ld's register destination
    I.tcgen05_st_instr: _e(Q.tcSt, Q.cuda1),  # BW-7.1: tcgen05.st's register source
}
# BW-4.3: tensor memory. The allocator's tcgen05.alloc / dealloc are in-order instrs (their
# effect on the columns is a RAM-like in-order mutate); mma writes and ld reads are tcgen05's.
_TMEM = {
    I.cuda_in_order_instr: _e(Q.cuda2),
    # BW-7.3: tcgen05.cp -> tcgen05.mma of one thread is a pipelined pair (PTX "Memory
    # Consistency Model for 5th generation of TensorCore operations"): the mma sees the cp
    I.tcgen05_mma_instr: _e(Q.tcM, Q.tcC),
    I.tcgen05_ld_instr: _e(Q.tcL), I.tcgen05_st_instr: _e(Q.tcSt),  # BW-7.1
    I.tcgen05_cp_instr: _e(Q.tcC),  # BW-7.2
}
_HOST = {I.cpu_in_order_instr: _e(Q.cpu), I.cpu_cuda_stream_instr: _e(Q.strm)}

# SEM-3.3, keyed by Memory.family (language.md §7.4).
QUALS: Mapping[str, Mapping[InstrTL, QualEntry]] = MappingProxyType({
    "gmem": MappingProxyType(_RAM), "smem": MappingProxyType(_RAM),
    "grid_constant": MappingProxyType(_RAM), "mbarrier": MappingProxyType(_RAM),
    "rmem": MappingProxyType(_REG), "rmem_matrix": MappingProxyType(_REG),
    "rmem_tk": MappingProxyType(_REG),
    # TK-5: ThunderKittens tiles wgmma reads A from / accumulates D into
    "rmem_tk_a": MappingProxyType({**_REG, I.wgmma_async_instr: _e(Q.wgA)}),
    "rmem_tk_d": MappingProxyType({**_REG, I.wgmma_async_instr: _e(Q.wgD, Q.wg0)}),
    "rmem_wgmma_d": MappingProxyType({**_REG, I.wgmma_async_instr: _e(Q.wgD, Q.wg0)}),
    "host": MappingProxyType(_HOST), "tmem": MappingProxyType(_TMEM),
})


def qual_entry(family: str, instr_tl: InstrTL, what: str) -> QualEntry:
    """SEM-3.3 lookup; a missing entry is ERR-A12."""
    entry = QUALS.get(family, {}).get(instr_tl)
    if entry is None:
        raise RejectedInput(f"no qual-tl for ({what}) given instr-tl {instr_tl}",
                            code="ERR-A12", rule="SEM-3.3")
    return entry


class AccessKind(Enum):
    """SEM-4.2."""

    read = "read"
    write = "write-only mutate"
    read_write = "read-write mutate"
    atomic = "atomic mutate"


def mutate_flag(kind: AccessKind) -> Flag:
    """The flag a mutate needs on earlier mutate records (SEM-4.5)."""
    return {AccessKind.atomic: Flag.atom, AccessKind.write: Flag.temp,
            AccessKind.read_write: Flag.full}[kind]


def drops_record(earlier: AccessKind, later: AccessKind) -> bool:
    """SEM-2.6 record lifecycle: does an access of kind `later` to an element discard an
    earlier record of kind `earlier` there? Every mutate discards the read records; a
    non-atomic mutate also the mutate records (atomic mutates accumulate). The machine's
    history update (hazards.check_and_record) is this rule on whole histories."""
    if later is AccessKind.read:
        return False
    return earlier is AccessKind.read or later is not AccessKind.atomic


class HazardKind(Enum):
    RAW = "RAW"
    WAR = "WAR"
    WAW = "WAW"


def hazard_kind(later: AccessKind, earlier_is_read: bool) -> HazardKind:
    """Which hazard a failed check is (SEM-4.5, ERR-V01..V03)."""
    if later is AccessKind.read:
        return HazardKind.RAW
    return HazardKind.WAR if earlier_is_read else HazardKind.WAW


def grant_flags_full(q: QualTL, sets: SyncSets) -> frozenset[Flag]:
    """Flags that a full augment A_F(C, τ2) grants on qual-tl q (SEM-5.2)."""
    if q in sets.full:
        return ALL_FLAGS
    if q in sets.temporal:
        return frozenset({Flag.temp})
    return frozenset()


def witnesses(first: SyncSets, quals_with_issue_or_full: frozenset[QualTL]) -> bool:
    """SEM-5.1 on the qual-tl dimension: τ1.F meets the qual-tls seen issued/full."""
    return bool(first.full & quals_with_issue_or_full)


def access_convergent(q0: QualTL, kind: AccessKind, in_instr: bool, cuda_scope: bool,
                      single_thread: bool) -> bool:
    """The conv attribute of an access (SEM-4.1, SEM-1.5)."""
    if not cuda_scope:
        return True
    if in_instr:
        return CONVERGENT[q0]
    return kind is not AccessKind.read or single_thread


def commit_on_behalf(s: ir.Stmt, tiling: object, shape: tuple[int, ...]) -> bool:
    """BW-5.5: a tcgen05.commit issued on behalf of CTAs that do not execute it: some point of
    its barrier expressions is a thread-loop iterator whose loop covers fewer elements than
    the barrier dimension it indexes (the pair's leader commits for both CTAs). Such a commit
    arrives once at every element it names (`each_element` when it multicasts)."""
    if not isinstance(s, ir.Arrive) or s.first is not SyncTL.tcgen05_commit:
        return False
    for ref in s.targets:
        for k, a in enumerate(ref.idx):
            if isinstance(a, ir.Point) and isinstance(a.pt, ir.Var) and k < len(shape):
                guard = tiling.guard_of(a.pt.name)  # type: ignore[attr-defined]
                if guard is not None and guard.tile_count < shape[k]:
                    return True
    return False


def commit_each_element(s: ir.Stmt, tiling: object, shape: tuple[int, ...]) -> bool:
    """BW-5.5: an on-behalf commit that multicasts counts at every element it names."""
    return commit_on_behalf(s, tiling, shape) and any(
        isinstance(a, ir.Interval) for r in s.targets for a in r.idx)  # type: ignore[union-attr]
