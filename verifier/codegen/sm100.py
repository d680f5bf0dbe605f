"""Blackwell (sm_100a) lowering: tensor memory, tcgen05 instructions and their synchronization
(specs/blackwell.md "Code generation", BW-CG-*).

Reads the calls of the `Sm100_*` instrs with the views of their operands, the tcgen05 sync
statements, and the `Sm100_Tmem` / `Sm100_RmemMatrixD` allocations; produces C/PTX lines and the
helpers they call (`sm100_text.py`). A TMEM variable is a 16-byte slot in dynamic SMEM that
`tcgen05.alloc` fills with the allocation's TMEM address; its view is that address (lane in bits
16-31, column in 0-15, PTX ISA "Tensor Memory addressing"), so a window is an address offset.
What the PTX ISA leaves to the layout and the verifier does not prove (operand alignment in
SMEM, the M = 64 lane layout) is refused here with the rule's reason, never emitted wrongly.
Non-goals: cta_group::2, kinds other than tf32 and f16, tcgen05.st / cp / shift (no rows: the
generic ERR-L06 refusal of instrs.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from math import prod
from types import MappingProxyType

from verifier.codegen import sm100_text
from verifier.codegen.exprs import OPAQUE_FAMILIES, Env, View, dense_strides
from verifier import collectives
from verifier.collectives import Tiling
from verifier.diagnostics import InternalError, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.config import CudaDeviceFunction
from verifier.lang.stdlib.memories import Memory
from verifier.lang.stdlib.timelines import SyncTL

TMEM_SLOT_BYTES = 16  # the uint32_t TMEM address tcgen05.alloc writes, in its own 16 bytes
LANE_SHIFT = 16  # TMEM address: lane << 16 | column (PTX ISA "Tensor Memory addressing")
# a TMEM address, and the registers of a tcgen05.ld tile (one row per thread)
TMEM_FAMILY, TILE_FAMILY = OPAQUE_FAMILIES
SWIZZLE_MODE = {32: 6, 64: 4, 128: 2}  # swizzle bytes -> descriptor bits 61-63
OPERAND_BYTES = 32  # bytes of K per row of one tcgen05.mma (tf32: 8, f16: 16 elements)
FENCE_BEFORE = 'asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");'
FENCE_AFTER = 'asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");'
_WAITS = {SyncTL.tcgen05_ld: "ld", SyncTL.tcgen05_st: "st"}
TCGEN05_SYNC = frozenset({SyncTL.tcgen05_commit, SyncTL.tcgen05_ld, SyncTL.tcgen05_st,
                          SyncTL.tcgen05_before_thread_sync, SyncTL.tcgen05_after_thread_sync})


def _refuse(what: str, loc: SrcLoc | None) -> Unsupported:
    return Unsupported(f"not lowered for sm_100a: {what}", loc, code="ERR-L06", rule="BW-CG-3")


# ---------------------------------------------------------------- allocations (BW-CG-2, -5)


def tmem_view(s: ir.Alloc, shard: tuple[int, ...], drop: int, offset: int, cname: str,
              ctype: str) -> tuple[list[str], View]:
    """The SMEM slot holding the TMEM address of `s` and the view of the address: strides
    1 << 16 for the lane dimension (the second last), columns dense over the others.
    Rules: BW-CG-2"""
    if len(shard) < 2 or shard[-2] != 128 or ctype != "float":
        raise Unsupported(f"{s.name.name}: a TMEM tensor is lowered as f32[..., 128, N] (one "
                          f"32-bit column per element), not {ctype} {list(shard)}", s.loc,
                          code="ERR-L06", rule="BW-CG-2")
    cols = dense_strides([str(d) for d in (*shard[:-2], shard[-1])])
    strides = (*cols[:-1], str(1 << LANE_SHIFT), cols[-1])
    decl = (f"[[maybe_unused]] uint32_t* const {cname} = "
            f"reinterpret_cast<uint32_t*>(exo_smem + {offset});")
    return [decl], View(ctype, f"{cname}[0]", strides, drop, False, 0, TMEM_FAMILY)


def tile_view(s: ir.Alloc, shard: tuple[int, ...], drop: int, cname: str,
              ctype: str) -> tuple[list[str], View]:
    """An `Sm100_RmemMatrixD` tile [..., 128, N]: N registers per thread (its row), so the
    lane dimension has stride 0 in the thread's view. Rules: BW-CG-5"""
    if len(shard) < 2 or shard[-2] != 128 or ctype != "float":
        raise Unsupported(f"{s.name.name}: an Sm100_RmemMatrixD tile is lowered as "
                          f"f32[..., 128, N], not {ctype} {list(shard)}", s.loc,
                          code="ERR-L06", rule="BW-CG-5")
    cols = dense_strides([str(d) for d in (*shard[:-2], shard[-1])])
    count = prod(shard[:-2]) * shard[-1]
    return ([f"{ctype} {cname}[{count}];"],
            View(ctype, cname, (*cols[:-1], "0", cols[-1]), drop, False, 0, TILE_FAMILY,
                 str(count)))


def cta_group(kernel: ir.DeviceFunction) -> int:
    """The .cta_group of a kernel's tcgen05 instructions: PTX requires one value for all of
    them; a kernel mixing cta_group::1 and ::2 instrs is refused at the first that differs.
    Rules: BW-CG-9"""
    seen: int | None = None
    for s in ir.statements(kernel.body):
        group = CTA_GROUP.get(getattr(s.callee, "name", "")) if isinstance(s, ir.Call) else None
        if group is not None and seen is not None and group != seen:
            raise Unsupported(f"{s.callee} is a cta_group::{group} instruction in a kernel "
                              f"whose tcgen05 instructions are cta_group::{seen}; PTX requires "
                              "one .cta_group per kernel", s.loc, code="ERR-L06",
                              rule="BW-CG-9")
        seen = group if group is not None else seen
    return seen or 1


def check_kernels(proc: ir.Proc) -> None:
    """Per kernel one .cta_group (BW-CG-9), and one column count for every allocation: PTX
    *tcgen05.alloc* forbids a CTA's allocations to grow, and a CTA runs the task body once per
    task it takes. Otherwise `ERR-L06` at the first that differs. Rules: BW-CG-2, BW-CG-9"""
    for kernel in ir.statements(proc.body):
        if not isinstance(kernel, ir.DeviceFunction):
            continue
        cta_group(kernel)
        seen: int | None = None
        for s in ir.statements(kernel.body):
            if isinstance(s, ir.Call) and getattr(s.callee, "name", "").startswith(
                    "Sm100_tmem_alloc"):
                ncols = _kw(s)["ncols"]
                if seen is not None and ncols != seen:
                    raise Unsupported(f"tcgen05.alloc of {ncols} columns after one of {seen}: "
                                      "the columns a CTA allocates must not increase between "
                                      "allocations, and each CTA runs the task body again for "
                                      "its next task, so every allocation of a kernel must take "
                                      "the same ncols", s.loc, code="ERR-L06", rule="BW-CG-2")
                seen = ncols


def is_tmem(mem: object) -> bool:
    return isinstance(mem, Memory) and mem.name == "Sm100_Tmem"


def is_tile(mem: object) -> bool:
    return isinstance(mem, Memory) and mem.name == "Sm100_RmemMatrixD"


# ---------------------------------------------------------------- instruction rows


def _kw(s: ir.Call) -> dict[str, int]:
    callee = s.callee
    given = (*getattr(callee, "bound", ()), *s.kwargs)
    return {k: v for k, v in given if isinstance(v, int)}


def _window(s: ir.Call, param: str) -> ir.Window:
    callee = s.callee
    for p, arg in zip(callee.params, s.args):  # type: ignore[union-attr]
        if p.name == param and isinstance(arg, ir.Window):
            return arg
    raise InternalError(f"{callee}: no window argument {param}", s.loc)


def _multiple_of(e: ir.Expr, k: int) -> bool:
    """Whether `e` is a multiple of `k` for every value of its variables (syntactically)."""
    match e:
        case ir.Const(value=int() as value):
            return value % k == 0
        case ir.BinOp(op="*", lhs=lhs, rhs=rhs):
            return _multiple_of(lhs, k) or _multiple_of(rhs, k)
        case ir.BinOp(op="+" | "-", lhs=lhs, rhs=rhs):
            return _multiple_of(lhs, k) and _multiple_of(rhs, k)
        case _:
            return False


def _starts(s: ir.Call, param: str) -> list[ir.Expr]:
    """The start of every dimension of a window argument (a point is its own start)."""
    out: list[ir.Expr] = []
    for acc in _window(s, param).idx:
        out.append(acc.lo if isinstance(acc, ir.Interval) else acc.pt)  # type: ignore[union-attr]
    return out


def _lane_zero(s: ir.Call, param: str) -> None:
    """A TMEM window of a whole-warpgroup tcgen05 access starts at lane 0. Rules: BW-CG-3"""
    lane = _starts(s, param)[-2]
    if not (isinstance(lane, ir.Const) and lane.value == 0):
        raise _refuse(f"{param} must start at TMEM lane 0 (M = 128 rows are lanes 0..127)",
                      s.loc)


def _operand(s: ir.Call, view: View, param: str, k: int) -> str:
    """`exo_Sm100_smemDesc(...)` of a K-major A or B tile: Sm90_SmemSwizzled(S) rows of exactly
    S bytes holding K = 32 bytes per MMA, the K slice starting at a multiple of K and the rows
    at a multiple of 8 (one swizzle atom). Rules: BW-CG-3"""
    esize = 4 if view.ctype == "float" else 2
    swizzle = view.swizzle
    row_elems = str(swizzle // esize) if swizzle else ""
    if swizzle not in SWIZZLE_MODE or view.scalar or view.strides != (row_elems, "1"):
        raise _refuse(f"operand {param} must be a K-major window of Sm90_SmemSwizzled(32, 64 or "
                      f"128) whose rows are the swizzle width, not swizzle {swizzle}, strides "
                      f"{list(view.strides)}", s.loc)
    rows, cols = _starts(s, param)[-2:]
    if not (_multiple_of(rows, 8) and _multiple_of(cols, k)):
        raise _refuse(f"operand {param} must start at a row that is a multiple of 8 and a "
                      f"column that is a multiple of K = {k} (one swizzle atom)", s.loc)
    return f"exo_Sm100_smemDesc({view.address()}, {8 * swizzle}u, {SWIZZLE_MODE[swizzle]}u)"


def _idesc(kind: str, a_type: str, m: int, n: int, loc: SrcLoc | None) -> int:
    """The instruction descriptor (PTX ISA "Instruction descriptor", kind::tf32 / kind::f16):
    D f32 (bits 4-5 = 1), A and B types (bits 7-9, 10-12), K-major A and B (bits 15, 16 = 0),
    N >> 3 (bits 17-22), M >> 4 (bits 24-28). Rules: BW-CG-3"""
    types = {("tf32", "float"): 2, ("f16", "__half"): 0, ("f16", "__nv_bfloat16"): 1}
    if (kind, a_type) not in types:
        raise _refuse(f"kind::{kind} with {a_type} operands", loc)
    ab = types[(kind, a_type)]
    return 1 << 4 | ab << 7 | ab << 10 | (n >> 3) << 17 | (m >> 4) << 24


def _mma(kind: str, group: int) -> "Sm100Lowering":
    def lower(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
        """One thread issues `tcgen05.mma.cta_group::<group>.kind::<kind>`; enable-input-d is
        1, as the instr's `+=` says. A pair MMA (M = 256) names the leader CTA's slices; the
        hardware takes the peer's at the same offsets. Rules: BW-CG-3, BW-CG-9"""
        kw = _kw(s)
        m, n = kw["M"], kw["N"]
        if m != 128 * group:
            raise _refuse(f"M = {m}: only M = 128 per CTA keeps row r of D in TMEM lane r (the "
                          "M = 64 layout interleaves lanes; PTX ISA \"Matrix fragments for "
                          "tcgen05.mma\")", s.loc)
        _lane_zero(s, "d")
        a, b, d = tensors["a"], tensors["b"], tensors["d"]
        if a.ctype != b.ctype:
            raise _refuse(f"A is {a.ctype} but B is {b.ctype}", s.loc)
        k = OPERAND_BYTES // (4 if a.ctype == "float" else 2)
        idesc = _idesc(kind, a.ctype, m, n, s.loc)
        return [f"exo_Sm100_mma_{kind}_cta{group}({d.base}, {_operand(s, a, 'a', k)},",
                f"    {_operand(s, b, 'b', k)}, {idesc:#x}u, 1u);"]
    return lower


def _alloc(verb: str, group: int) -> "Sm100Lowering":
    def lower(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
        """`tcgen05.alloc` writes the TMEM address into the variable's SMEM slot;
        `tcgen05.dealloc` frees the address read from it; with cta_group::2 a warp of each CTA
        of the pair runs it, each with its own CTA's slot. Rules: BW-CG-2, BW-CG-9"""
        view = tensors["tmem"]
        if view.family != TMEM_FAMILY or not view.base.endswith("[0]"):
            raise InternalError(f"{s.callee}: not a whole TMEM variable: {view.base}", s.loc)
        ncols = _kw(s)["ncols"]
        if verb == "alloc":
            slot = f"static_cast<uint32_t>(__cvta_generic_to_shared({view.base[:-3]}))"
            return [f'asm volatile("tcgen05.alloc.cta_group::{group}.sync.aligned.shared::cta.b32 '
                    f'[%0], %1;" :: "r"({slot}), "r"({ncols}u) : "memory");']
        return [f'asm volatile("tcgen05.dealloc.cta_group::{group}.sync.aligned.b32 %0, %1;" :: '
                f'"r"({view.base}), "r"({ncols}u) : "memory");']
    return lower


def _relinquish(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
    """Not emitted: a CTA runs the task body once per task it takes (the persistent task loop,
    LANG-8.3), and PTX forbids `tcgen05.alloc` after `tcgen05.relinquish_alloc_permit`; the
    permit is only a scheduling hint and has no memory effect (BW-1.4). Rules: BW-CG-2"""
    return ["// tcgen05.relinquish_alloc_permit: not emitted, the CTA may run further tasks "
            "that allocate (BW-CG-2)"]


def _ld(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
    """Each warp of the warpgroup loads its lane quarter. Rules: BW-CG-5"""
    _lane_zero(s, "src")
    n = _kw(s)["N"]
    return [f"exo_Sm100_tmemLd32x32b_x{n}({tensors['dst'].base}, {tensors['src'].base});"]


def _store(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
    """Rules: BW-CG-5"""
    dst = tensors["dst"]
    if dst.scalar or len(dst.strides) != 2 or dst.swizzle:
        raise InternalError(f"{s.callee}: dst is not a linear 2-D window", s.loc)
    return [f"exo_Sm100_storeRow<{_kw(s)['N']}>({dst.base}, {dst.strides[0]}, "
            f"{dst.strides[1]}, {tensors['src'].base});"]


Sm100Lowering = Callable[[ir.Call, Mapping[str, View], Mapping[str, str]], list[str]]

# the .cta_group of each instr that has one (BW-CG-9)
CTA_GROUP: Mapping[str, int] = MappingProxyType({
    **{f"Sm100_tmem_{verb}{suffix}": group for verb in ("alloc", "dealloc",
                                                         "relinquish_alloc_permit")
       for suffix, group in (("", 1), ("_cta2", 2))},
    **{f"Sm100_mma_{kind}_cta{group}": group for kind in ("tf32", "f16") for group in (1, 2)}})

SM100_ROWS: Mapping[str, Sm100Lowering] = MappingProxyType({
    **{name: (_relinquish if "relinquish" in name else _alloc(name.split("_")[2], group))
       for name, group in CTA_GROUP.items() if name.startswith("Sm100_tmem_")},
    **{name: _mma(name.split("_")[2], group) for name, group in CTA_GROUP.items()
       if name.startswith("Sm100_mma_")},
    "Sm100_tmem_ld_32x32b_f32": _ld,
    "Sm100_store_d_row_major_f32": _store,
})


def helpers(calls: list[tuple[str, dict[str, int]]]) -> str:
    """The helpers the Sm100 rows of `calls` use ("" if none)."""
    names = {name for name, _ in calls}
    out = ""
    mmas = sorted(name for name in names if name.startswith("Sm100_mma_") and name in CTA_GROUP)
    if mmas:
        out += sm100_text.DESCRIPTOR + "".join(
            sm100_text.mma_helper(name.split("_")[2], CTA_GROUP[name]) for name in mmas)
    ns = sorted({kw["N"] for name, kw in calls if name == "Sm100_tmem_ld_32x32b_f32"})
    out += "".join(sm100_text.ld_helper(n) for n in ns)
    if names & {"Sm100_tmem_ld_32x32b_f32", "Sm100_store_d_row_major_f32"}:
        out += sm100_text.ROWS
    return out


# ---------------------------------------------------------------- synchronization


def commit_lines(slot: str, rank_deltas: tuple[int, ...], cluster_dim: int,
                 group: int) -> list[str]:
    """`Arrive(tcgen05_commit) >> z`: `tcgen05.commit` (with the kernel's .cta_group) arriving
    once on the slot when the thread's earlier tcgen05 operations are complete; a multicast
    names the CTAs own rank XOR each delta in a 16-bit CTA mask. The caller advances the
    ring. Rules: BW-CG-4, BW-CG-9"""
    head = f"tcgen05.commit.cta_group::{group}.mbarrier::arrive::one.shared::cluster"
    if rank_deltas == (0,):
        return [f'asm volatile("{head}.b64 [%0];" :: "r"({slot}) : "memory");']
    mask = " | ".join(f"(1u << (exo_rank ^ {d}u))" for d in rank_deltas)
    return ["{", f"    const uint32_t exo_rank = blockIdx.x % {cluster_dim}u;",
            f"    const uint16_t exo_mask = static_cast<uint16_t>({mask});",
            f'    asm volatile("{head}.multicast::cluster.b64 [%0], %1;" :: "r"({slot}), '
            '"h"(exo_mask) : "memory");', "}"]


def wait_lines(first: SyncTL, tiling: Tiling, dev: CudaDeviceFunction, env: Env,
               loc: SrcLoc | None) -> list[str]:
    """`Fence(tcgen05_ld | tcgen05_st, cuda_in_order)`: `tcgen05.wait::ld` / `::st`, a
    `.sync.aligned` warp instruction, so the threads that run the Fence (over all iterations of
    its thread loops) must be whole warps; then after wait::ld every tcgen05.ld tile in scope is
    pinned below it. Rules: BW-CG-6"""
    threads = frozenset().union(*collectives.thread_groups(tiling, dev).groups.values())
    partial = sorted({n // 32 for n in threads if any(n // 32 * 32 + lane not in threads
                                                      for lane in range(32))})
    if partial:
        raise Unsupported(f"tcgen05.wait::{_WAITS[first]} is a .sync.aligned warp instruction, "
                          f"but this Fence runs on part of warp {partial[0]} only", loc,
                          code="ERR-L06", rule="BW-CG-6")
    out = [f'asm volatile("tcgen05.wait::{_WAITS[first]}.sync.aligned;" ::: "memory");']
    if first is SyncTL.tcgen05_ld:
        tiles = [v for v in env.views.values() if v.family == TILE_FAMILY and v.elems]
        out += [f"exo_Sm100_pinRegs<{v.elems}>({v.base});" for v in tiles]
    return out


def is_wait(first: SyncTL) -> bool:
    return first in _WAITS
