"""Tensor maps (LANG-6.6): the host-side `CUtensorMap` and the device-side TMA coordinates.

Reads a CPU-scope window statement `tm = g[...] @ Sm90_tensorMap(swizzle, *box)` and, in device
code, the window argument of a TMA instruction; produces the host lines that encode the
descriptor with `cuTensorMapEncodeTiled` (reached through the runtime's driver entry point, so
no `-lcuda` is needed) and the int32 coordinates of a device window inside the map.

The parser composes a window of a window into a window of the underlying tensor, so a TMA
argument names the GMEM tensor, not the map. `resolve` finds the map: among the maps over that
tensor in scope, those whose point dimensions are the argument's (same expressions) and whose
swizzle the instruction needs; exactly one must remain, otherwise the call is `Unsupported`.
Non-goals: im2col maps, interleaved layouts, element strides other than 1.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from verifier.codegen.exprs import Env, TensorMap, View, atom, c_mul, cexpr, window_view
from verifier.codegen.names import ctype_of
from verifier.diagnostics import InternalError, RejectedInput, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import SpecialWindow
from verifier.lang.ir.printer import expr_text

_INT = re.compile(r"-?[0-9]+")
MAX_BOX = 256  # cuTensorMapEncodeTiled: every box extent is at most 256

# CUtensorMapDataType of each element C type (LANG-6.6).
DATA_TYPES = {
    "float": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32", "__half": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
    "__nv_bfloat16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "double": "CU_TENSOR_MAP_DATA_TYPE_FLOAT64",
    "int32_t": "CU_TENSOR_MAP_DATA_TYPE_INT32", "uint8_t": "CU_TENSOR_MAP_DATA_TYPE_UINT8",
    "uint16_t": "CU_TENSOR_MAP_DATA_TYPE_UINT16",
}

HOST_HELPER = r"""#ifndef EXO_TENSOR_MAP_ENCODE
#define EXO_TENSOR_MAP_ENCODE
#include <cudaTypedefs.h>
#include <stdio.h>
// A tensor map that cannot be encoded makes every TMA of the kernel wrong: stop by default.
#ifndef EXO_TENSOR_MAP_FAILED
#define EXO_TENSOR_MAP_FAILED(what) (fprintf(stderr, "spork-verify: %s\n", what), abort())
#endif
// LANG-6.6: a tiled TMA descriptor; dims, strides and box innermost first, strides in bytes
// (the innermost stride is 1 element). The driver function is reached through the runtime.
static inline CUtensorMap exo_encodeTensorMap(
    CUtensorMapDataType dtype, cuuint32_t rank, const void* base, const cuuint64_t* dims,
    const cuuint64_t* byteStrides, const cuuint32_t* box, CUtensorMapSwizzle swizzle)
{
    static PFN_cuTensorMapEncodeTiled_v12000 exo_encode = nullptr;
    CUtensorMap exo_map;
    memset(&exo_map, 0, sizeof(exo_map));
    if (exo_encode == nullptr) {
        cudaDriverEntryPointQueryResult exo_status = cudaDriverEntryPointSymbolNotFound;
        void* exo_fn = nullptr;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &exo_fn, 12000,
                                             cudaEnableDefault, &exo_status) != cudaSuccess ||
            exo_status != cudaDriverEntryPointSuccess || exo_fn == nullptr) {
            EXO_TENSOR_MAP_FAILED("cuTensorMapEncodeTiled is not available");
            return exo_map;
        }
        exo_encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(exo_fn);
    }
    const cuuint32_t exo_elementStrides[5] = {1, 1, 1, 1, 1};
    const CUresult exo_result = exo_encode(
        &exo_map, dtype, rank, const_cast<void*>(base), dims, byteStrides, box,
        exo_elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (exo_result != CUDA_SUCCESS) {
        EXO_TENSOR_MAP_FAILED("cuTensorMapEncodeTiled rejected a tensor map");
    }
    return exo_map;
}
#endif
"""


def map_shape(s: ir.WindowStmt, ctype: str = "", cname: str = "") -> TensorMap:
    """The map a CPU-scope window statement defines (element type and C name optional: enough
    to `resolve` TMA windows against it)."""
    special = s.special
    assert isinstance(special, SpecialWindow)
    dims = tuple((isinstance(a, ir.Point), a.pt if isinstance(a, ir.Point) else a.lo)
                 for a in s.rhs.idx)
    return TensorMap(s.name, s.rhs.buf, special, dims, ctype, cname, s.loc)


def new_tensor_map(s: ir.WindowStmt, view: View, cname: str) -> TensorMap:
    """Check the descriptor's static limits (ERR-L06). Rules: LANG-6.6"""
    if view.ctype not in DATA_TYPES:
        raise Unsupported(f"tensor map {s.name.name} of {view.ctype} elements", s.loc,
                          code="ERR-L06", rule="LANG-6.6")
    tm = map_shape(s, view.ctype, cname)
    special = tm.special
    problem = None
    if tm.rank != len(tm.box):
        problem = f"the window has {tm.rank} intervals but the box has {len(tm.box)} extents"
    elif any(b > MAX_BOX for b in tm.box):
        problem = f"box extents are at most {MAX_BOX}"
    elif (tm.box[-1] * tm.elem_bytes) % 16:
        problem = "the innermost box extent must span a multiple of 16 bytes"
    elif tm.swizzle and tm.box[-1] * tm.elem_bytes > tm.swizzle:
        problem = f"the innermost box extent spans more than the {tm.swizzle}-byte swizzle"
    if problem:
        raise RejectedInput(f"cannot encode {s.name.name} = {expr_text(s.rhs)} @ {special}: "
                            f"{problem}", s.loc, code="ERR-L06", rule="LANG-6.6")
    return tm


def host_lines(tm: TensorMap, s: ir.WindowStmt, env: Env) -> list[str]:
    """`CUtensorMap <cname>` encoded over the host window: dims are its interval extents and
    strides its strides (in bytes), both innermost first; the innermost stride must be 1
    (a literal other than 1 is ERR-L06, a runtime one is `EXO_ASSUME`d). Rules: LANG-6.6"""
    view = window_view(s.rhs, env)
    extents = [c_sub(cexpr(a.hi, env), cexpr(a.lo, env)) for a in s.rhs.idx
               if isinstance(a, ir.Interval)]
    strides = list(view.strides)
    if len(strides) != tm.rank:
        raise InternalError(f"{tm.sym.name}: {len(strides)} strides for rank {tm.rank}", s.loc)
    out = [f"// {tm.sym.name}: TMA descriptor over {tm.buf.name}, box {list(tm.box)}, "
           f"swizzle {tm.swizzle} (LANG-6.6)"]
    if strides[-1] != "1":
        if _INT.fullmatch(strides[-1]):
            raise RejectedInput(f"{tm.sym.name}: the innermost stride of a tensor map must be 1, "
                                f"not {strides[-1]}", s.loc, code="ERR-L06", rule="LANG-6.6")
        out.append(f"EXO_ASSUME({strides[-1]} == 1);")
    swz = f"CU_TENSOR_MAP_SWIZZLE_{tm.swizzle}B" if tm.swizzle else "CU_TENSOR_MAP_SWIZZLE_NONE"
    size = f"sizeof({tm.ctype})"
    dims = ", ".join(f"static_cast<cuuint64_t>({e})" for e in reversed(extents))
    byte_strides = ", ".join(f"static_cast<cuuint64_t>({c_mul(size, st)})"
                             for st in reversed(strides[:-1]))
    box = ", ".join(f"{b}u" for b in reversed(tm.box))
    out += [f"CUtensorMap {tm.cname};", "{",
            f"    const cuuint64_t exo_dims[{tm.rank}] = {{{dims}}};"]
    if tm.rank > 1:
        out.append(f"    const cuuint64_t exo_strides[{tm.rank - 1}] = {{{byte_strides}}};")
    out += [f"    const cuuint32_t exo_box[{tm.rank}] = {{{box}}};",
            f"    {tm.cname} = exo_encodeTensorMap({DATA_TYPES[tm.ctype]}, {tm.rank}, {view.base}, "
            f"exo_dims, {'exo_strides' if tm.rank > 1 else 'nullptr'}, exo_box, {swz});", "}"]
    return out


def c_sub(lhs: str, rhs: str) -> str:
    """lhs - rhs with literal folding."""
    if rhs == "0":
        return lhs
    if _INT.fullmatch(lhs) and _INT.fullmatch(rhs):
        return str(int(lhs) - int(rhs))
    return f"{atom(lhs)} - {atom(rhs)}"


def resolve(window: ir.Window, maps: Sequence[TensorMap], swizzle: int, what: str,
            loc: SrcLoc) -> TensorMap:
    """The one tensor map in scope that `window` goes through: the one it names when the
    parser records it (`Window.tensor_map`), else the single match. Rules: LANG-6.6"""
    named = getattr(window, "tensor_map", None)
    candidates = [tm for tm in maps if tm.buf == window.buf and tm.swizzle == swizzle and
                  _same_points(tm, window) and (named is None or tm.sym == named[0])]
    if len(candidates) == 1:
        return candidates[0]
    if named is not None and not any(tm.sym == named[0] for tm in maps):
        raise Unsupported(f"{what}: the tensor-map parameter {named[0].name} was passed a "
                          "window no tensor map was taken through (no CUtensorMap to use); "
                          "pass a window of `m = g[...] @ Sm90_tensorMap(...)`", loc,
                          code="ERR-V11", rule="CG-C1")
    if not candidates:
        raise Unsupported(f"{what}: no Sm90_tensorMap with swizzle {swizzle} over "
                          f"{window.buf.name} matches {expr_text(window)}; create one at CPU "
                          "scope before the CudaDeviceFunction", loc, code="ERR-L06",
                          rule="LANG-6.6")
    names = ", ".join(tm.sym.name for tm in candidates)
    raise Unsupported(f"{what}: {expr_text(window)} may go through any of the tensor maps "
                      f"{names} (windows of windows name the tensor, not the map); keep one "
                      f"map per tensor and swizzle", loc, code="ERR-L06", rule="LANG-6.6")


def _same_points(tm: TensorMap, window: ir.Window) -> bool:
    if len(window.idx) != len(tm.dims):
        return False
    for (is_point, host), acc in zip(tm.dims, window.idx):
        if is_point and not (isinstance(acc, ir.Point) and acc.pt == host):
            return False
    return True


def coordinates(tm: TensorMap, window: ir.Window, env: Env, loc: SrcLoc) -> list[str]:
    """Int32 coordinates of `window` in the map, in the DSL's dimension order (outermost
    first): the window start minus the host window's start. A point is allowed only where the
    box extent is 1 (ERR-L06). Rules: LANG-6.6"""
    out: list[str] = []
    box = iter(tm.box)
    for (is_point, host), acc in zip(tm.dims, window.idx):
        if is_point:
            continue
        extent = next(box)
        if isinstance(acc, ir.Point) and extent != 1:
            raise RejectedInput(f"{expr_text(window)}: a point in a dimension where the box of "
                                f"{tm.sym.name} has extent {extent} (only extent-1 box "
                                "dimensions take points)", loc, code="ERR-L06", rule="LANG-6.6")
        start = acc.pt if isinstance(acc, ir.Point) else acc.lo
        assert isinstance(start, ir.Expr)
        coord = c_sub(cexpr(start, env), cexpr(host, env))
        if tm.offsets:  # CG-T1: the parameter's window starts there in the caller's map
            coord = f"{tm.offsets[len(out)]} + {atom(coord)}"
        out.append(coord)
    return out


def walk_ir(node: Any, visit: Callable[[Any], None]) -> None:
    """`visit` every IR node under `node` (not into callees)."""
    if isinstance(node, tuple):
        for x in node:
            walk_ir(x, visit)
        return
    visit(node)
    if dataclasses.is_dataclass(node) and not isinstance(node, (type, ir.Proc)) and \
            type(node).__module__ == ir.__name__:
        for f in dataclasses.fields(node):
            walk_ir(getattr(node, f.name), visit)


def param_maps(proc: ir.Proc) -> dict[ir.Sym, SpecialWindow]:
    """The proc's tensor-map parameters (`x: [T][...] @ Sm90_tensorMap(...)`, LANG-3.4): the
    arguments some window of the body is taken through. Rules: CG-T1"""
    args = {a.name for a in proc.args}
    found: dict[ir.Sym, SpecialWindow] = {}

    def visit(node: Any) -> None:
        if isinstance(node, ir.Window) and node.tensor_map is not None and \
                node.tensor_map[0] in args:
            found[node.tensor_map[0]] = node.tensor_map[1]
    walk_ir(proc.body, visit)
    return found


def mentions_stride_of(e: ir.Expr, syms: set[ir.Sym]) -> bool:
    """Whether `e` reads `stride(x, k)` of one of `syms`."""
    found = [False]

    def visit(node: Any) -> None:
        if isinstance(node, ir.Stride) and node.buf in syms:
            found[0] = True
    walk_ir(e, visit)
    return found[0]


def param_map(arg: ir.Arg, special: SpecialWindow, cname: str) -> TensorMap:
    """The host side of a tensor-map parameter: `<cname>.map`, window offsets
    `<cname>.offsets[k]` (outermost first). Rules: CG-T1"""
    assert isinstance(arg.typ, ir.Tensor)
    zero = ir.Const(0, arg.loc)
    rank = len(arg.typ.shape)
    if rank != len(special.box):
        raise RejectedInput(f"tensor-map parameter {arg.name.name}: {rank} dimensions but the "
                            f"box has {len(special.box)} extents", arg.loc, code="ERR-L06",
                            rule="LANG-6.6")
    ctype = ctype_of(arg.typ.base)
    if ctype not in DATA_TYPES:
        raise Unsupported(f"tensor-map parameter {arg.name.name} of {ctype} elements", arg.loc,
                          code="ERR-L06", rule="LANG-6.6")
    return TensorMap(arg.name, arg.name, special, tuple((False, zero) for _ in range(rank)),
                     ctype, f"{cname}.map", arg.loc,
                     tuple(f"{cname}.offsets[{k}]" for k in range(rank)))


def param_struct(rank: int) -> str:
    """The C type of a rank-`rank` tensor-map parameter (include-guarded). Rules: CG-T1"""
    name = f"exo_tensorMapWindow{rank}"
    return "\n".join([f"#ifndef EXO_TENSOR_MAP_WINDOW{rank}", f"#define EXO_TENSOR_MAP_WINDOW{rank}",
                      f"// CG-T1: a window of a caller's tensor map: the encoded map and where the",
                      f"// window starts in it (elements, outermost dimension first)",
                      f"struct {name}", "{", "    CUtensorMap map;",
                      f"    int32_t offsets[{rank}];", "};", "#endif", ""])
