"""Allocations, permissions and the sites the static walk records (part of `static.Analyzer`).

`SiteRecorder` holds what an allocation declares (memory, shape, the loops it lives in, its
ring), checks each access's permission (LANG-4.2) and records it as an `AccessSite`, and
builds the SEM-4.7 free site of a tracked SMEM or mbarrier allocation (DIAL-12, DIAL-20 decide
which). The walk itself (scopes, loops, device functions) is `static.Analyzer`, its subclass.
Non-goals: anything dynamic (hazards, bounds) — those are proof obligations.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from verifier.check import static_barriers, static_data_rings, static_rings
from verifier.check.sites import AccessSite, Context, Element, ProgramModel, Trailing
from verifier.diagnostics import RejectedInput, SporkError, SrcLoc
from verifier.lang.ir import ir
from verifier.lang.ir.printer import expr_text
from verifier.lang.parse.dialect import message_dialect
from verifier.lang.stdlib.dialects import memory_text
from verifier.lang.stdlib.memories import MBARRIER_STORAGE, CudaMbarrier, Memory, smem_below_cluster
from verifier.lang.stdlib.timelines import InstrTL, QualTL
from verifier.semantics import rules
from verifier.semantics.rules import AccessKind


def located(e: SporkError, loc: SrcLoc) -> SporkError:
    if e.loc.line == 0:
        e.loc = loc
    return e


def literal_int(e: ir.Expr) -> int | None:
    if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


class SiteRecorder:
    """The walk's state about allocations and the access sites it records (set up by
    `static.Analyzer.__init__`)."""

    proc: ir.Proc
    model: ProgramModel
    mutated: frozenset[ir.Sym]
    free_exempt: frozenset[ir.Sym]
    mems: dict[ir.Sym, Memory]
    alloc_loops: dict[ir.Sym, tuple[ir.Sym, ...]]
    alloc_ctx: dict[ir.Sym, Context]
    alloc_site_loc: dict[ir.Sym, SrcLoc]
    barrier_decls: dict[ir.Sym, Any]
    elem_types: dict[ir.Sym, str]
    data_rings: dict[ir.Sym, static_data_rings.DataRing]
    later: list[RejectedInput]
    next_id: int

    def fresh_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def mem_text(self, mem: Memory) -> str:
        """`mem` as upstream's version of the file prints it (DIAL-19)."""
        proc = self.model.proc
        return memory_text(str(mem), message_dialect(proc.dialect, proc.loc.file))

    def alloc(self, s: ir.Alloc, ctx: Context) -> None:
        if isinstance(s.typ, ir.BarrierType):
            static_barriers.declare(self, s, ctx)
            decl = self.barrier_decls[s.name]
            self.mems[s.name] = MBARRIER_STORAGE
            self.model.shapes[s.name] = decl.logical_shape(s.loc)
            self.alloc_loops[s.name] = decl.alloc_loops
            self.alloc_ctx[s.name] = ctx
            self.alloc_site_loc[s.name] = s.loc
            if decl.mech is CudaMbarrier:
                self.mutated = self.mutated | {s.name}  # storage is always tracked (SEM-2.1)
            if static_rings.is_ring(decl):
                static_rings.handoff(self, s, decl, ctx)
            return
        mem = s.mem
        assert isinstance(mem, Memory)
        perms = mem.cuda_perms if ctx.cuda else mem.cpu_perms
        if "c" not in perms or mem.abstract:
            scope = "cuda_basic_device" if ctx.cuda else "cpu_basic_device"
            raise RejectedInput(f"{s.name.name} @ {mem} cannot be allocated in a scope using "
                                f"{scope}", s.loc, code="ERR-A02", rule="LANG-4.2")
        ring = static_data_rings.declare(self, s, self.proc)
        shape = ring.physical if ring is not None else \
            s.typ.shape if isinstance(s.typ, ir.Tensor) else ()
        if mem.family == "gmem" and not shape:
            self.later.append(RejectedInput("Cannot allocate scalar CudaGmemLinear", s.loc,
                                            code="ERR-A16", rule="LANG-6.1"))
        elem = ir.element_type(s.typ) or ""
        if mem.name == "CudaRmemPacked32" and elem not in ("f32", "i32", "f16", "bf16"):
            raise RejectedInput(f"CudaRmemPacked32 doesn't support {elem}", s.loc,
                                code="ERR-A16", rule="LANG-6.4")
        dims = f"[{', '.join(expr_text(d) for d in shape)}]"
        if mem.const_shape and any(literal_int(d) is None for d in shape):
            if mem.is_smem:
                self.later.append(RejectedInput(
                    f"SMEM allocation {s.name.name} @ {mem} requires constant shape, not "
                    f"{dims}; simplify() if needed", s.loc, code="ERR-A16", rule="LANG-6.3"))
            elif not (mem.is_register and ctx.cuda):  # registers: the shard, after COLL-5
                raise RejectedInput(f"{s.name.name} @ {self.mem_text(mem)} requires constant "
                                    f"shape. Saw: {dims}; simplify() if needed", s.loc,
                                    code="ERR-A16", rule="LANG-6.3")
        if mem.is_smem and ctx.device is not None and ctx.device.cfg.clusterDim > 1 \
                and ctx.thread_iters:
            raise smem_below_cluster(s.name.name, mem, s.loc)
        self.mems[s.name] = mem
        self.elem_types[s.name] = elem
        self.model.shapes[s.name] = shape
        self.alloc_loops[s.name] = tuple(lp.sym for lp in ctx.loops)
        self.alloc_ctx[s.name] = ctx
        self.alloc_site_loc[s.name] = s.loc
        if ring is not None:  # DIAL-18: the handoff shadow, of the logical shape
            self.data_rings[s.name] = ring
            self.mems[ring.shadow] = mem
            self.model.shapes[ring.shadow] = ring.logical
            self.alloc_loops[ring.shadow] = self.alloc_loops[s.name]
            self.mutated = self.mutated | {ring.shadow}
            self.model.ordering.add(ring.shadow)
            self.free_exempt = self.free_exempt | {ring.shadow}
            static_data_rings.handoff(self, ring, self.proc.body, ctx, s.loc)

    def free_site(self, a: ir.Alloc, ctx: Context, loc: SrcLoc, site_id: int | None = None,
                  some_thread: bool = False) -> AccessSite | None:
        """SEM-4.7: the free of a tracked SMEM or mbarrier allocation at `ctx`, reported at
        `loc` (the allocation for the end of its block, CG-R1's statement for a release).
        Release sites take negative ids, so the ids (and queries) of the others never move.
        `some_thread` (DIAL-20): the cluster frees as one convergent collective, so an earlier
        access need only be complete, seen by some thread of it."""
        mem = self.mems.get(a.name)
        if mem is None or mem.family not in ("smem", "mbarrier") or a.name not in self.mutated \
                or a.name in self.free_exempt:
            return None
        shape = self.model.shapes[a.name]
        element = Element(tuple(None for _ in shape),
                          tuple((ir.Const(0, a.loc), d) for d in shape))
        qual = rules.QualEntry(QualTL.cuda2, frozenset({QualTL.cuda2}))
        return AccessSite(
            self.fresh_id() if site_id is None else site_id, a.name, mem, shape, element,
            AccessKind.write, qual, some_thread, False, frozenset(), ctx, loc, True,
            self.alloc_loops[a.name], is_free=True, single_thread=False)

    def permission(self, sym: ir.Sym, kind: AccessKind, instr_tl: InstrTL, ctx: Context,
                   loc: SrcLoc, callee: str | None = None) -> Memory:
        mem = self.mems[sym]
        perms = mem.cuda_perms if ctx.cuda else mem.cpu_perms
        if instr_tl is InstrTL.cpu_cuda_stream_instr and mem.family == "gmem":
            perms = "rwc"
        if mem.family == "tmem" and callee is None:  # BW-1.5: only tcgen05 instrs reach TMEM
            perms = ""
        scope = "cuda_basic_device" if ctx.cuda else "cpu_basic_device"
        letter = "r" if kind is AccessKind.read else "w"
        if letter not in perms:
            what = "reads" if letter == "r" and callee is None else \
                "mutable access" if "r" in perms else "any access"
            where = f" (in call to {callee} with instr-tl {instr_tl})" if callee else ""
            raise RejectedInput(f"{sym.name} @ {mem} does not allow {what} in a scope using "
                                f"{scope}{where}", loc, code="ERR-A01", rule="LANG-4.2")
        return mem

    def record_access(self, sym: ir.Sym, element: Element, kind: AccessKind, instr_tl: InstrTL,
                      ctx: Context, loc: SrcLoc, sub: int, in_instr: bool,
                      atomic_quals: frozenset[QualTL] = frozenset(),
                      single_thread: bool = True, callee: str | None = None,
                      trailing: Trailing | None = None) -> None:
        mem = self.permission(sym, kind, instr_tl, ctx, loc, callee)
        qual = rules.qual_entry(mem.family, instr_tl, f"{sym.name} @ {mem}")
        conv = rules.access_convergent(qual.q0, kind, in_instr, ctx.cuda, single_thread)
        self.add_site(sym, element, kind, qual, conv, ctx, loc, sub, atomic_quals,
                      single_thread, qual.q0 in rules.OUT_OF_ORDER, trailing)

    def add_site(self, sym: ir.Sym, element: Element, kind: AccessKind, qual: rules.QualEntry,
                 conv: bool, ctx: Context, loc: SrcLoc, sub: int,
                 atomic_quals: frozenset[QualTL] = frozenset(), single_thread: bool = False,
                 out_of_order: bool = False, trailing: Trailing | None = None) -> None:
        ring = self.data_rings.get(sym)
        if ring is not None:  # DIAL-18: the shadow read (logical), then the slot (physical)
            self.add_site(ring.shadow, element, AccessKind.read, qual, conv, ctx, loc, sub,
                          frozenset(), single_thread, out_of_order)
            element = static_data_rings.physical(ring, element, loc)
        mem = self.mems[sym]
        tracked = sym in self.mutated and not mem.sync_exempt
        self.model.accesses.append(AccessSite(
            self.fresh_id(), sym, mem, self.model.shapes[sym], element, kind, qual, conv,
            out_of_order, atomic_quals, replace(ctx, path=ctx.path + (sub,)),
            loc, tracked, self.alloc_loops[sym], single_thread=single_thread,
            trailing=trailing))

    def check_rank(self, sym: ir.Sym, n: int, loc: SrcLoc) -> None:
        shape = self.model.shapes.get(sym, ())
        if len(shape) != n:
            raise RejectedInput(f"{sym.name} has {len(shape)} dimensions but is accessed with "
                                f"{n} indices", loc, code="ERR-P21", rule="LANG-3.2")
