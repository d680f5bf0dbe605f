"""Blackwell (sm_100a) lowering: tensor memory, its allocation and the tcgen05 synchronization
(specs/blackwell.md "Code generation", BW-CG-*).

Reads the `Sm100_Tmem` / `Sm100_RmemMatrixD` allocations, the TMEM allocation calls and the
tcgen05 sync statements of a kernel; produces their C/PTX lines and the per-kernel facts the
lowering needs (the `.cta_group`, the column count every allocation takes). A TMEM variable is a
16-byte slot in dynamic SMEM that `tcgen05.alloc` fills with the allocation's TMEM address; its
view is that address (lane in bits 16-31, column in 0-15, PTX ISA "Tensor Memory"), so a window
is an address offset. The instruction rows are in `sm100_rows.py`, helper text in
`sm100_text.py`. What the PTX ISA leaves to the layout and the verifier does not prove is
refused with the rule's reason, never emitted wrongly.
Non-goals: tcgen05.shift, block-scaled kinds (no rows: the generic ERR-L06 refusal).
"""

from __future__ import annotations

from math import prod

from verifier import collectives
from verifier.codegen.exprs import OPAQUE_FAMILIES, Env, View, dense_strides
from verifier.codegen.names import ctype_of, ctype_size
from verifier.collectives import Tiling
from verifier.diagnostics import InternalError, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.config import CudaDeviceFunction
from verifier.lang.stdlib.instrs_sm100 import CTA_GROUP
from verifier.lang.stdlib.memories import Memory
from verifier.lang.stdlib.timelines import SyncTL

TMEM_SLOT_BYTES = 16  # the uint32_t TMEM address tcgen05.alloc writes, in its own 16 bytes
TMEM_COLUMNS = 512
LANE_SHIFT = 16  # TMEM address: lane << 16 | column (PTX ISA "Tensor Memory")
# a TMEM address, and the registers of a tcgen05.ld tile (one row per thread)
TMEM_FAMILY, TILE_FAMILY = OPAQUE_FAMILIES
FENCE_BEFORE = 'asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");'
FENCE_AFTER = 'asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");'
_WAITS = {SyncTL.tcgen05_ld: "ld", SyncTL.tcgen05_st: "st"}
TCGEN05_OPERANDS = ("Sm100_mma_", "Sm100_tmem_cp_")  # instrs reading SMEM by descriptor
TCGEN05_SYNC = frozenset({SyncTL.tcgen05_commit, SyncTL.tcgen05_ld, SyncTL.tcgen05_st,
                          SyncTL.tcgen05_before_thread_sync, SyncTL.tcgen05_after_thread_sync})
ALLOCATORS = {f"Sm100_tmem_{verb}{suffix}": (verb, CTA_GROUP[f"Sm100_tmem_{verb}{suffix}"])
              for verb in ("alloc", "dealloc") for suffix in ("", "_cta2")}


def keywords(s: ir.Call) -> dict[str, int]:
    """The integer template keywords of a call, `partial`'s included."""
    given = (*getattr(s.callee, "bound", ()), *s.kwargs)
    return {k: v for k, v in given if isinstance(v, int)}


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


def is_tmem(mem: object) -> bool:
    return isinstance(mem, Memory) and mem.name == "Sm100_Tmem"


def is_tile(mem: object) -> bool:
    return isinstance(mem, Memory) and mem.name == "Sm100_RmemMatrixD"


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


def kernel_columns(kernel: ir.DeviceFunction) -> int:
    """The column count every `tcgen05.alloc` of the kernel takes: the largest the program
    asks for. PTX *tcgen05.alloc*: the columns a CTA allocates must not increase from one
    allocation to the next, and a CTA runs the task body once per task it takes, so smaller
    allocations are padded (a variable uses the first columns of its allocation). Refused when
    the padded allocations could exceed the 512 columns. Rules: BW-CG-2"""
    allocs = [s for s in ir.statements(kernel.body) if isinstance(s, ir.Call) and
              ALLOCATORS.get(getattr(s.callee, "name", ""), ("",))[0] == "alloc"]
    if not allocs:
        return 0
    ncols = max(keywords(s)["ncols"] for s in allocs)
    if len(allocs) * ncols > TMEM_COLUMNS:
        raise Unsupported(f"{len(allocs)} tcgen05.allocs of {ncols} columns each exceed the "
                          f"{TMEM_COLUMNS} TMEM columns (every allocation of a kernel takes the "
                          "largest column count, since a CTA's allocations must not grow)",
                          allocs[-1].loc, code="ERR-L06", rule="BW-CG-2")
    return ncols


def relaid_operands(kernel: ir.DeviceFunction) -> dict[ir.Sym, int]:
    """The `CudaSmemLinear` tiles stored swizzled: a K-major tcgen05 operand without swizzling
    must be laid out in 8-row x 16-byte core matrices (PTX *Shared memory matrix layout*), which
    a row-major tile is not, so a linear tile whose rows are 32, 64 or 128 bytes and whose only
    windows are tcgen05.mma / tcgen05.cp operands is stored as `Sm90_SmemSwizzled(row bytes)`
    (its scalar accesses go through the same swizzle, LANG-6.3). Returns the swizzle of each.
    Rules: BW-CG-11"""
    linear = {s.name: s for s in ir.statements(kernel.body) if isinstance(s, ir.Alloc) and
              getattr(s.mem, "name", "") == "CudaSmemLinear"}
    operands: set[ir.Sym] = set()
    others: set[ir.Sym] = set()
    for s in ir.statements(kernel.body):
        if isinstance(s, ir.WindowStmt):
            others.add(s.rhs.buf)
        if isinstance(s, ir.Call):
            tcgen05 = getattr(s.callee, "name", "").startswith(TCGEN05_OPERANDS)
            for a in s.args:
                if isinstance(a, ir.Window):
                    (operands if tcgen05 else others).add(a.buf)
    out: dict[ir.Sym, int] = {}
    for sym in sorted(operands & set(linear) - others, key=lambda x: x.name):
        typ, base = linear[sym].typ, ir.element_type(linear[sym].typ)
        last = typ.shape[-1] if isinstance(typ, ir.Tensor) and typ.shape else None
        if base is not None and isinstance(last, ir.Const) and isinstance(last.value, int):
            row = last.value * ctype_size(ctype_of(base))
            if row in (32, 64, 128):
                out[sym] = row
    return out


def check_kernels(proc: ir.Proc) -> None:
    """Per kernel one .cta_group and a column count that fits. Rules: BW-CG-2, BW-CG-9"""
    for kernel in ir.statements(proc.body):
        if isinstance(kernel, ir.DeviceFunction):
            cta_group(kernel)
            kernel_columns(kernel)


def allocator_lines(s: ir.Call, view: View, ncols: int, group: int) -> list[str]:
    """`tcgen05.alloc` of `ncols` columns writes the TMEM address into the variable's SMEM
    slot; `tcgen05.dealloc` frees the address read from it; with cta_group::2 a warp of each
    CTA of the pair runs it, each with its own CTA's slot. Rules: BW-CG-2, BW-CG-9"""
    verb, _ = ALLOCATORS[s.callee.name]  # type: ignore[union-attr]
    if view.family != TMEM_FAMILY or not view.base.endswith("[0]"):
        raise InternalError(f"{s.callee}: not a whole TMEM variable: {view.base}", s.loc)
    asked = keywords(s)["ncols"]
    note = [] if asked == ncols else [f"// {asked} columns asked, {ncols} taken (BW-CG-2)"]
    if verb == "alloc":
        slot = f"static_cast<uint32_t>(__cvta_generic_to_shared({view.base[:-3]}))"
        return note + [f'asm volatile("tcgen05.alloc.cta_group::{group}.sync.aligned.'
                       f'shared::cta.b32 [%0], %1;" :: "r"({slot}), "r"({ncols}u) : "memory");']
    return note + [f'asm volatile("tcgen05.dealloc.cta_group::{group}.sync.aligned.b32 %0, %1;"'
                   f' :: "r"({view.base}), "r"({ncols}u) : "memory");']


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
