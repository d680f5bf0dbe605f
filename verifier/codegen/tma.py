"""TMA instructions (language.md §7.6, SEM-8.6): bulk tensor copies between GMEM and SMEM.

Reads a TMA instruction call with its resolved tensor map (kernel-side `TensorMap`), the views
of its SMEM operand, and, for loads, the address of the current ring slot of its trailing
mbarrier; produces C/PTX lines. One lane of the calling warp is elected (`elect.sync`); for a
load it posts the transaction bytes on the slot (`mbarrier.expect_tx`) and issues
`cp.async.bulk.tensor.<r>d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`
(`.multicast::cluster` with a CTA mask for the multicast instruction); the following
`Arrive(cuda_temporal)` does the thread arrivals. Stores and reductions issue
`cp[.reduce].async.bulk.tensor.<r>d.global.shared::cta[.add].tile.bulk_group`, completed by the
bulk commit group (SEM-8.4). Non-goals: im2col, gather, L2 cache hints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from math import prod
from types import MappingProxyType

from verifier.codegen.exprs import Env, TensorMap, View, atom, c_mul
from verifier.codegen.tensormap import coordinates, map_shape, resolve
from verifier.diagnostics import InternalError, RejectedInput, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import SpecialWindow
from verifier.lang.stdlib.scalars import ScalarInfo


@dataclass(frozen=True, slots=True)
class TmaRow:
    """One TMA instruction: direction, whether its SMEM side is swizzled, parameter names."""

    kind: str  # "load" | "multicast" | "store" | "reduce"
    swizzled: bool
    map_param: str
    smem_param: str
    endgame: bool = False  # `Sm90_tma_*_{n}d`: swizzle and element type are keywords (DIAL-1)

    @property
    def is_load(self) -> bool:
        return self.kind in ("load", "multicast")


def _rows() -> dict[str, TmaRow]:
    out: dict[str, TmaRow] = {}
    for layout in ("linear", "swizzled"):
        swz = layout == "swizzled"
        out[f"Sm90_copy_tensor_to_smem_{layout}_2f32"] = TmaRow("load", swz, "src", "dst")
        out[f"Sm90_copy_tensor_to_gmem_{layout}_2f32"] = TmaRow("store", swz, "dst", "src")
        out[f"Sm90_reduce_tensor_to_gmem_{layout}_2f32"] = TmaRow("reduce", swz, "dst", "src")
    out["Sm90_multicast_copy_tensor_to_smem_swizzled_2f32"] = TmaRow("multicast", True, "src",
                                                                      "dst")
    for rank in range(1, 6):  # endgame's names (TMA-CG-1)
        out[f"Sm90_tma_load_{rank}d"] = TmaRow("load", True, "src", "dst", True)
        out[f"Sm90_tma_store_{rank}d"] = TmaRow("store", True, "dst", "src", True)
        out[f"Sm90_tma_reduce_add_{rank}d"] = TmaRow("reduce", True, "dst", "src", True)
    out["Sm90_tma_load_multicast_2d"] = TmaRow("multicast", True, "src", "dst", True)
    return out


TMA_ROWS: Mapping[str, TmaRow] = MappingProxyType(_rows())
ELEMENT_BYTES = 4  # the stdlib's TMA instructions move f32


def map_swizzle(row: TmaRow, kwargs: Mapping[str, int]) -> int:
    """The swizzle the instruction's tensor map must have: the bytes of one SMEM row for
    February's swizzled instructions (32, 64 or 128), 0 for the linear ones; endgame's
    `swizzle=` keyword (128 when absent, 0: linear). Rules: LANG-6.6, TMA-CG-1"""
    if row.endgame:
        return kwargs.get("swizzle", 128)
    return kwargs["size1"] * ELEMENT_BYTES if row.swizzled else 0


def box_sizes(kwargs: Mapping[str, int]) -> tuple[int, ...]:
    """`size0`, `size1`, ...: the window every issuing CTA names (February's are 2-D)."""
    return tuple(kwargs[f"size{k}"] for k in range(5) if f"size{k}" in kwargs)


def element_type(s: ir.Call, row: TmaRow) -> str:
    """The element type the instruction moves: f32 for February's rows, the `dst=` precision
    for endgame's (its expect-tx bytes are counted in that type, TX-1). Rules: SEM-8.6,
    TMA-CG-1"""
    if not row.endgame:
        return "f32"
    callee = s.callee
    given = {k: getattr(v, "name", v) for k, v in (*getattr(callee, "bound", ()), *s.kwargs)}
    return str(given["dst"])


def _window_arg(s: ir.Call, name: str) -> ir.Window:
    callee = s.callee
    for param, arg in zip(callee.params, s.args):  # type: ignore[union-attr]
        if param.name == name:
            if not isinstance(arg, ir.Window):
                raise InternalError(f"{callee}: argument {name} is not a window", s.loc)
            return arg
    raise InternalError(f"{callee}: no parameter {name}", s.loc)


def map_window(s: ir.Call, row: TmaRow) -> ir.Window:
    """The window argument that goes through a tensor map."""
    return _window_arg(s, row.map_param)


def used_tensor_maps(stmts: tuple[ir.Stmt, ...],
                     maps: tuple[TensorMap, ...] = ()) -> frozenset[ir.Sym]:
    """The CPU-scope tensor maps some TMA call goes through (the host encodes only those: an
    unused map's encoding could only fail). Calls that resolve to no single map are left to
    the emitter, which refuses them. Rules: LANG-6.6"""
    used: set[ir.Sym] = set()
    scope = list(maps)
    for s in stmts:
        if isinstance(s, ir.WindowStmt) and isinstance(s.special, SpecialWindow):
            scope.append(map_shape(s))
        row = TMA_ROWS.get(getattr(s.callee, "name", "")) if isinstance(s, ir.Call) else None
        if row is not None:
            assert isinstance(s, ir.Call)
            kwargs = {k: v for k, v in s.kwargs if isinstance(v, int)}
            try:
                used.add(resolve(map_window(s, row), scope, map_swizzle(row, kwargs),
                                 str(s.callee), s.loc).sym)
            except Unsupported:
                pass
        for child in ("body", "orelse"):
            used |= used_tensor_maps(getattr(s, child, ()), tuple(scope))
    return frozenset(used)


def _nonunit(extents: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(e for e in extents if e != 1)


def _check_box(tm: TensorMap, sizes: tuple[int, ...], what: str, loc: SrcLoc) -> None:
    """The map's box, extent-1 dimensions aside, is the tile of `sizes`. Rules: LANG-6.6"""
    if _nonunit(tm.box) != _nonunit(sizes):
        raise RejectedInput(f"{what}: the box {list(tm.box)} of {tm.sym.name} does not match "
                            f"the {' x '.join(map(str, sizes))} tile the instruction copies",
                            loc, code="ERR-L06", rule="LANG-6.6")


def _check_smem(view: View, tm: TensorMap, sizes: tuple[int, ...], what: str,
                loc: SrcLoc) -> None:
    """A dense tile of `sizes` (extent-1 dimensions at any stride), in the map's swizzle.
    Rules: LANG-6.3, LANG-8.7"""
    dense = [str(prod(sizes[k + 1:])) for k in range(len(sizes))]
    if view.scalar or len(view.strides) != len(sizes) or any(
            n != 1 and st != d for n, st, d in zip(sizes, view.strides, dense)):
        raise RejectedInput(f"{what}: the SMEM operand must be a dense {list(sizes)} tile "
                            f"(strides {', '.join(dense)}), not strides "
                            f"{list(view.strides)}", loc, code="ERR-L06", rule="LANG-8.7")
    if view.family != "smem" or view.swizzle != tm.swizzle:
        raise RejectedInput(f"{what}: SMEM swizzle {view.swizzle} differs from the swizzle "
                            f"{tm.swizzle} of {tm.sym.name}", loc, code="ERR-L06",
                            rule="LANG-6.3")


def _coords_c(coords: list[str]) -> str:
    """A braced int32 list, innermost dimension first (CUDA's order)."""
    return "{" + ", ".join(f"static_cast<int32_t>({c})" for c in reversed(coords)) + "}"


def lower_tma(s: ir.Call, row: TmaRow, env: Env, smem: View, tm: TensorMap,
              slot: str | None, cluster_dim: int) -> list[str]:
    """The lines of one TMA call (SEM-8.6). Rules: LANG-6.6, LANG-8.7, SEM-8.4, SEM-8.6"""
    what = str(s.callee)
    kwargs = {k: v for k, v in s.kwargs if isinstance(v, int)}
    sizes = box_sizes(kwargs)
    window = map_window(s, row)
    elem = element_type(s, row)
    if tm.elem_bytes != ScalarInfo(elem).bits // 8:
        # the verified transaction counts are in the instruction's elements (SEM-8.6); the
        # hardware would count the map's element size
        raise RejectedInput(f"{what} moves {elem} elements, but {tm.sym.name} has "
                            f"{tm.ctype} elements", s.loc, code="ERR-L06", rule="LANG-6.6")
    coords = coordinates(tm, window, env, s.loc)
    mapref = f"&{tm.cname}"
    if row.kind == "multicast":
        return _multicast(s, kwargs, smem, tm, coords, slot, cluster_dim)
    _check_box(tm, sizes, what, s.loc)
    _check_smem(smem, tm, sizes, what, s.loc)
    rank = tm.rank
    if row.kind == "load":
        if slot is None:
            raise InternalError(f"{what} without a trailing mbarrier", s.loc)
        nbytes = prod(tm.box) * tm.elem_bytes
        return [f"exo_Sm90_tmaLoad<{rank}>({smem.address()}, {mapref}, {_coords_c(coords)}, "
                f"{slot}, {nbytes}u);"]
    reduce = "true" if row.kind == "reduce" else "false"
    return [f"exo_Sm90_tmaStore<{rank}, {reduce}>({mapref}, {_coords_c(coords)}, "
            f"{smem.address()});"]


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _multicast(s: ir.Call, kwargs: Mapping[str, int], smem: View, tm: TensorMap,
               coords: list[str], slot: str | None, cluster_dim: int) -> list[str]:
    """CTA `k` of the `ncta` CTAs (rank stride `cta_stride`) loads rows [k·c, (k+1)·c) of the
    tile, c = size0 / ncta, into that place of every CTA of the group (CTA mask); each CTA
    expects the whole tile's bytes on its own slot. Rules: SEM-8.6, COLL-5.12"""
    what = str(s.callee)
    ncta, stride = kwargs["ncta"], kwargs["cta_stride"]
    rows, cols = kwargs["size0"], kwargs["size1"]
    if slot is None:
        raise InternalError(f"{what} without a trailing mbarrier", s.loc)
    if rows % ncta or (rows // ncta) % 8:
        raise RejectedInput(f"{what}: size0 = {rows} must be a multiple of 8 * ncta = "
                            f"{8 * ncta}", s.loc, code="ERR-L06", rule="LANG-8.7")
    if ncta * stride > cluster_dim or cluster_dim % (ncta * stride) or \
            not (_pow2(ncta) and _pow2(stride)):
        raise Unsupported(f"{what}: ncta = {ncta}, cta_stride = {stride} in a cluster of "
                          f"{cluster_dim} (CTA masks need power-of-two counts and strides "
                          "dividing the cluster)", s.loc, code="ERR-L06", rule="COLL-5.11")
    coop = rows // ncta
    if ncta == 1 and len(smem.strides) == 3:
        # COLL-5.12: a one-CTA destination dimension is not distributed; it has extent 1
        smem = replace(smem, strides=smem.strides[1:])
    _check_box(tm, (coop, cols), what, s.loc)
    _check_smem(smem, tm, (coop, cols), what, s.loc)
    first = next((k for k, extent in enumerate(tm.box) if extent != 1), None)
    if first is None:
        raise InternalError(f"{what}: no row dimension in the box {tm.box}", s.loc)
    coords = list(coords)
    coords[first] = f"{atom(coords[first])} + exo_cta * {coop}"
    pattern = sum(1 << (j * stride) for j in range(ncta))
    rank = f"blockIdx.x % {cluster_dim}u"
    return ["{",
            f"    // CTA exo_cta of {ncta} (rank stride {stride}) loads rows [exo_cta * {coop}, "
            f"+{coop}) for all of them",
            f"    const uint32_t exo_cta = {rank} / {stride}u % {ncta}u;",
            f"    const uint16_t exo_ctaMask = static_cast<uint16_t>({pattern}u << "
            f"({rank} - exo_cta * {stride}u));",
            f"    exo_Sm90_tmaLoadMulticast<{tm.rank}>({smem.address()} + "
            f"{c_mul('exo_cta', str(coop * cols))}, &{tm.cname}, {_coords_c(coords)}, {slot}, "
            f"{rows * cols * tm.elem_bytes}u, exo_ctaMask);",
            "}"]


def _asm_case(rank: int, ptx: str, head: list[str], tail: list[str]) -> list[str]:
    """`if constexpr (Rank == r) asm volatile(...)`: operands `head`, the r coordinates, then
    `tail`; in `ptx`, `{C}` is the coordinate vector and `{t0}`, `{t1}` the tail operands."""
    n_head = len(head)
    vector = "{" + ", ".join(f"%{n_head + k}" for k in range(rank)) + "}"
    fields = {f"t{k}": f"%{n_head + rank + k}" for k in range(len(tail))}
    text = ptx.format(C=vector, **fields)
    operands = head + [f'"r"(c[{k}])' for k in range(rank)] + tail
    return [f"    if constexpr (Rank == {rank}) {{",
            f'        asm volatile("{text}"',
            f"                     :: {', '.join(operands)} : \"memory\");",
            "    }"]


def _load_helper(multicast: bool) -> list[str]:
    name = "exo_Sm90_tmaLoadMulticast" if multicast else "exo_Sm90_tmaLoad"
    extra = ", uint16_t mask" if multicast else ""
    suffix = ".multicast::cluster" if multicast else ""
    out = ["template <int Rank>",
           f"static __device__ __forceinline__ void {name}(",
           "    void* dst, const CUtensorMap* map, const int32_t (&c)[Rank], uint32_t bar, "
           f"uint32_t bytes{extra})",
           "{",
           "    if (!exo_electOne()) {",
           "        return;",
           "    }",
           '    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" '
           ':: "r"(bar), "r"(bytes) : "memory");',
           "    const uint32_t smem = static_cast<uint32_t>(__cvta_generic_to_shared(dst));"]
    head = ['"r"(smem)', '"l"(map)']
    tail = ['"r"(bar)'] + (['"h"(mask)'] if multicast else [])
    for rank in range(1, 6):
        ptx = (f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile."
               f"mbarrier::complete_tx::bytes{suffix} [%0], [%1, {{C}}], [{{t0}}]" +
               (", {t1};" if multicast else ";"))
        out += _asm_case(rank, ptx, head, tail)
    return out + ["}", ""]


def _store_helper() -> list[str]:
    out = ["template <int Rank, bool Reduce>",
           "static __device__ __forceinline__ void exo_Sm90_tmaStore(",
           "    const CUtensorMap* map, const int32_t (&c)[Rank], const void* src)",
           "{",
           "    if (!exo_electOne()) {",
           "        return;",
           "    }",
           "    const uint32_t smem = static_cast<uint32_t>(__cvta_generic_to_shared(src));",
           "    if constexpr (Reduce) {"]
    for reduce in (True, False):
        if not reduce:
            out.append("    } else {")
        for rank in range(1, 6):
            op = "cp.reduce.async.bulk.tensor" if reduce else "cp.async.bulk.tensor"
            add = ".add" if reduce else ""
            ptx = f"{op}.{rank}d.global.shared::cta{add}.tile.bulk_group [%0, {{C}}], [{{t0}}];"
            out += ["    " + line for line in _asm_case(rank, ptx, ['"l"(map)'],
                                                         ['"r"(smem)'])]
    return out + ["    }", "}", ""]


def helpers() -> str:
    """`exo_electOne` and the TMA helpers (include-guarded). Rules: SEM-8.6"""
    lines = ["#ifndef EXO_SM90_TMA", "#define EXO_SM90_TMA",
             "// SEM-8.6: one lane of the warp issues each TMA; the elected lane is the same",
             "// for the same mask, and every lane of the warp must call.",
             "static __device__ __forceinline__ bool exo_electOne()", "{",
             "    uint32_t exo_elected = 0;",
             '    asm volatile("{\\n\\t.reg .pred exo_p;\\n\\telect.sync _|exo_p, 0xffffffff;'
             '\\n\\tselp.u32 %0, 1, 0, exo_p;\\n\\t}" : "=r"(exo_elected));',
             "    return exo_elected != 0;", "}", ""]
    lines += _load_helper(False) + _load_helper(True) + _store_helper()
    return "\n".join(lines + ["#endif", ""])
