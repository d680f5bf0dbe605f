"""Static rules of the Blackwell tcgen05 synchronization (specs/blackwell.md BW-3.1, BW-3.2..3.4):
which sync-tls `tcgen05.commit`, `tcgen05.wait::ld` and the tcgen05 fences may take, and who
issues a commit. Called from static_barriers and static_calls where the Hopper rules would
reject a tcgen05 sync-tl, so those modules keep their own tables unchanged.
"""

from __future__ import annotations

from verifier import collectives
from verifier.diagnostics import RejectedInput, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.ir.printer import expr_text
from verifier.lang.stdlib.instrs import Instr, InstrParam
from verifier.lang.stdlib.instrs_sm100 import CTA_GROUP
from verifier.lang.stdlib.timelines import SyncTL, implements
from verifier.lang.stdlib.units import cuda_thread
from verifier.check.sites import Context

TCGEN05_ARRIVE = frozenset({SyncTL.tcgen05_commit})
AFTER = SyncTL.tcgen05_after_thread_sync
BEFORE = SyncTL.tcgen05_before_thread_sync


def mbarrier_arrive(first: SyncTL, ctx: Context, loc: SrcLoc) -> bool:
    """BW-3.1: `Arrive(tcgen05_commit) >> mbar` is tcgen05.commit, issued by one thread (the
    one that issued the MMAs it tracks). True when the Arrive is a valid commit."""
    if first not in TCGEN05_ARRIVE:
        return False
    assert ctx.device is not None
    problem = collectives.matches_unit(ctx.tiling, cuda_thread, ctx.device.cfg)
    if problem is not None:
        raise RejectedInput(f"tcgen05.commit (Arrive({first})) must be issued by one thread: "
                            f"{problem}", loc, code="ERR-L07", rule="BW-3.1")
    return True


def mbarrier_await(second: SyncTL) -> bool:
    """BW-3.3: an mbarrier wait may end in tcgen05.fence::after_thread_sync."""
    return second is AFTER


def fence(first: SyncTL, second: SyncTL, loc: SrcLoc) -> str | None:
    """BW-3.2..3.4: the Fences that lower to tcgen05 instructions: "wait" (tcgen05.wait, per
    thread) or "thread_sync" (a thread sync with tcgen05 fences, scoped as any Fence, COLL-3.2);
    None leaves the fence to the Hopper rules (LANG-5.20)."""
    if first is SyncTL.tcgen05_ld or first is SyncTL.tcgen05_st:
        if second is not SyncTL.cuda_in_order:
            raise RejectedInput(f"tcgen05.wait (Fence({first}, ...)) needs second sync-tl "
                                f"cuda_in_order, not {second}", loc, code="ERR-L08",
                                rule="BW-3.2")
        return "wait"
    if first is BEFORE or second is AFTER:
        if not (first is BEFORE or implements(first, SyncTL.Sm80_generic)) or \
                not (second is AFTER or implements(second, SyncTL.cuda_generic_and_async_proxy)):
            raise RejectedInput(f"Fence({first}, {second}): a tcgen05 thread-sync fence takes "
                                "tcgen05_before_thread_sync or at most Sm80_generic first, and "
                                "tcgen05_after_thread_sync or at most "
                                "cuda_generic_and_async_proxy second", loc, code="ERR-L08",
                                rule="BW-3.4")
        return "thread_sync"
    return None


def is_pair_instr(name: str) -> bool:
    """The cta_group::2 instrs (BW-5)."""
    return CTA_GROUP.get(name) == 2


def pair_launch(callee: Instr, ctx: Context, loc: SrcLoc) -> None:
    """BW-5.1: a cta_group::2 instr needs CTA pairs: clusterDim a multiple of 2 (a pair is
    CTAs 2k and 2k + 1 of the cluster). Only clusterDim = 2 is modelled (one pair)."""
    if not is_pair_instr(callee.name) or ctx.device is None:
        return
    c = ctx.device.cfg.clusterDim
    if c % 2:
        raise RejectedInput(f"{callee.name} is a cta_group::2 instruction but the kernel has "
                            f"no CTA pairs (clusterDim={c}): launch with clusterDim=2",
                            loc, code="ERR-A35", rule="BW-5.1")
    if c != 2:
        raise Unsupported(f"not supported by spork-verify: {callee.name} with clusterDim={c} "
                          "(cta_group::2 is modelled for one CTA pair, clusterDim=2)", loc,
                          code="ERR-V11", rule="BW-5.1")


def pair_window(s: ir.Call, param: InstrParam, arg: ir.Window, ctx: Context) -> None:
    """BW-5.2, BW-5.3: a cta_group::2 operand's first index is the whole pair `0:2`, and the
    issuing thread is in the pair's leader CTA (even rank in the cluster)."""
    first = arg.idx[0] if arg.idx else None
    if not (isinstance(first, ir.Interval) and isinstance(first.lo, ir.Const) and
            isinstance(first.hi, ir.Const) and (first.lo.value, first.hi.value) == (0, 2)):
        raise RejectedInput(f"argument {param.name} of {s.callee.name} names both CTAs of the "
                            f"pair: its first index must be 0:2, not "
                            f"{expr_text(first) if first is not None else 'missing'}", s.loc,
                            code="ERR-A35", rule="BW-5.2", variable=arg.buf.name)
    assert ctx.device is not None
    groups = collectives.thread_groups(ctx.tiling, ctx.device.cfg)
    block = ctx.device.cfg.blockDim
    odd = sorted({n // block for g in groups.groups.values() for n in g if (n // block) % 2})
    if odd:
        raise RejectedInput(f"{s.callee.name} must be issued by a thread of the pair's leader "
                            f"CTA (even rank), not by CTA {odd[0]} of the cluster", s.loc,
                            code="ERR-A35", rule="BW-5.3")


ALLOC, DEALLOC = "Sm100_tmem_alloc", "Sm100_tmem_dealloc"


def tmem_allocations(proc: ir.Proc) -> None:
    """BW-1.1, BW-1.3: each `Sm100_Tmem` variable is allocated once by tcgen05.alloc of its own
    column count, freed once by tcgen05.dealloc, and used only between the two, in its scope."""
    _blocks(proc.body)


def cta_groups(proc: ir.Proc) -> None:
    """BW-5.4: a kernel's tcgen05 instrs all take one .cta_group (PTX: the same in a kernel);
    checked before the statement walk, whose unit checks would name only a symptom."""
    first: dict[bool, ir.Call] = {}
    for s in ir.statements(proc.body):
        if isinstance(s, ir.Call) and isinstance(s.callee, Instr) and \
                s.callee.root().name in CTA_GROUP:
            pair = is_pair_instr(s.callee.root().name)
            first.setdefault(pair, s)
            if not pair and True in first or pair and False in first:
                other = first[not pair]
                raise RejectedInput(f"{s.callee.root().name} mixes .cta_group::"
                                    f"{2 if pair else 1} with .cta_group::{1 if pair else 2} of "
                                    f"{other.callee.root().name} at line {other.loc.line}: all "
                                    "tcgen05 instructions of a kernel take the same .cta_group",
                                    s.loc, code="ERR-A35", rule="BW-5.4")


def _blocks(body: tuple[ir.Stmt, ...]) -> None:
    for i, s in enumerate(body):
        if isinstance(s, ir.Alloc) and getattr(s.mem, "family", None) == "tmem":
            _one_variable(s, ir.statements(body[i + 1:]))
        for part in ("body", "orelse"):
            _blocks(getattr(s, part, ()))


def _uses(s: ir.Stmt, sym: ir.Sym) -> bool:
    return isinstance(s, ir.Call) and isinstance(s.callee, Instr) and any(
        isinstance(a, (ir.Window, ir.Read)) and a.buf == sym for a in s.args)


def _one_variable(decl: ir.Alloc, scope: list[ir.Stmt]) -> None:
    name = decl.name.name
    uses = [s for s in scope if _uses(s, decl.name)]
    allocs = [s for s in uses if s.callee.root().name in (ALLOC, ALLOC + "_cta2")]
    deallocs = [s for s in uses if s.callee.root().name in (DEALLOC, DEALLOC + "_cta2")]
    if len(allocs) != 1:
        raise RejectedInput(f"TMEM variable {name} must be allocated by exactly one "
                            f"{ALLOC} in its scope ({len(allocs)} found)", decl.loc,
                            code="ERR-A33", rule="BW-1.3")
    if len(deallocs) != 1:
        what = "never freed" if not deallocs else f"freed {len(deallocs)} times"
        raise RejectedInput(f"TMEM allocation of {name} is {what}: call {DEALLOC}({name}[:, :], "
                            f"ncols=...) once, before the end of its scope", allocs[0].loc,
                            code="ERR-A33", rule="BW-1.3")
    first, last = uses.index(allocs[0]), uses.index(deallocs[0])
    if first != 0 or last != len(uses) - 1:
        bad = uses[0] if first != 0 else uses[-1]
        raise RejectedInput(f"{name} is used outside its TMEM allocation (after {DEALLOC} or "
                            f"before {ALLOC})", bad.loc, code="ERR-A33", rule="BW-1.3")
    columns = decl.typ.shape[-1] if getattr(decl.typ, "shape", None) else None
    for call in (allocs[0], deallocs[0]):
        ncols = dict(call.kwargs).get("ncols", dict(call.callee.bound).get("ncols"))
        if isinstance(columns, ir.Const) and ncols != columns.value:
            raise RejectedInput(f"{call.callee.root().name} of {name} takes ncols={ncols} but "
                                f"{name} has {columns.value} columns", call.loc,
                                code="ERR-A34", rule="BW-1.1")
