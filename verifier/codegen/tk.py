"""CUDA text of the ThunderKittens tiles, vectors and their instructions (TK-4).

Reads tk allocations and calls of `cuda_tk_*` instrs; produces declarations of ThunderKittens
register tiles and vectors (`::kittens::rt_fl<16, 32, ...> x[lead]`), one `::kittens::warp::`
call per instr (every lane of the calling warp runs it, LANG-8.7), and the helpers the calls
use: GMEM windows as ThunderKittens global layouts, windows of swizzled SMEM as shared
subtiles (ThunderKittens swizzles by address exactly as `exo_swizzled` does, LANG-6.3), and
linear SMEM vectors as shared vectors. The file then needs ThunderKittens' headers
(`-I THUNDERKITTENS/include`, C++20; `targets.TK_FLAGS`). Non-goals: fp8 types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from math import prod
from types import MappingProxyType

from verifier.codegen.exprs import View, atom, dense_strides
from verifier.diagnostics import InternalError, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.cuda_tk import INNER_COLS, TkTile, TkVec
from verifier.lang.stdlib.cuda_tk_ops import BINARY, BY_VECTOR, CONSTANTS, REDUCTIONS, UNARY

_SUFFIX = {"f32": "fl", "f16": "hf", "bf16": "bf"}
_TYPE = {"f32": "float", "f16": "::kittens::half", "bf16": "::kittens::bf16"}


def tk_type(mem: TkTile | TkVec, elem: str) -> str:
    """The ThunderKittens C++ type of one tile or vector of `mem` holding `elem`."""
    if elem not in _SUFFIX:
        raise Unsupported(f"ThunderKittens registers of {elem}", None, code="ERR-L06",
                          rule="LANG-8.6")
    if isinstance(mem, TkTile):
        return (f"::kittens::rt_{_SUFFIX[elem]}<{mem.rows}, {mem.cols}, "
                f"::kittens::ducks::rt_layout::{mem.layout}>")
    return f"::kittens::rv_{_SUFFIX[elem]}<{mem.length}, ::kittens::ducks::rv_layout::{mem.layout}>"


def alloc(mem: TkTile | TkVec, elem: str, shard: tuple[int, ...], drop: int, cname: str
          ) -> tuple[list[str], View]:
    """One warp's tiles (vectors): an array over the shard's leading dimensions; its view
    steps in whole tiles (`frag`), so only instrs reach elements; `elems` counts the tiles
    (the wgmma register pins, TK-CG-5). Rules: LANG-8.6, TK-4, TK-CG-1"""
    packed = 2 if isinstance(mem, TkTile) else 1
    lead = [str(d) for d in shard[:-packed]]
    ctype = tk_type(mem, elem)
    if mem.family == "rmem_tk_d":  # Sm90_TkRmemTileD: the tile and wgmma's scale-d (TK-CG-1)
        ctype = f"exo_tk_accumD<{ctype}>"
    count = prod(shard[:-packed])
    return ([f"{ctype} {cname}[{count}];"],
            View(ctype, cname, dense_strides(lead), drop, False, 1, mem.family, str(count)))


def _obj(view: View) -> str:
    """The lvalue of the tile or vector a window of a tk allocation names."""
    if not view.family.startswith("rmem_tk"):
        raise InternalError(f"{view.base} is not a ThunderKittens register window")
    return f"(*{atom(view.base)})"


@dataclass(frozen=True, slots=True)
class TkCall:
    """One call as its row sees it: the views of its windows, the C text of its size, index
    and scalar arguments, and every keyword (template sizes and precision names)."""

    views: dict[str, View]
    cargs: dict[str, str]
    keywords: dict[str, object]

    def obj(self, name: str) -> str:
        return _obj(self.views[name])

    def operand(self, name: str) -> str:
        """A tile or vector operand, or the C lvalue of a scalar one."""
        view = self.views.get(name)
        return self.cargs[name] if view is None else view.base if view.scalar else _obj(view)

    def size(self, name: str) -> int:
        return int(str(self.keywords[name]))

    def elem(self, name: str) -> str:
        return _TYPE[str(self.keywords[name])]


Row = Callable[[TkCall], list[str]]


def _call(op: str, *operands: str) -> list[str]:
    return [f"::kittens::warp::{op}({', '.join(operands)});"]


def _map_row(op: str, form: str) -> Row:
    """Elementwise rows: the operand order of each form of upstream's tile and vector ops."""
    def lower(call: TkCall) -> list[str]:
        dst = call.obj("dst")
        match form:
            case "0ary":
                return _call(op, dst)
            case "unary":
                return _call(op, dst, call.operand("src"))
            case "3op":
                return _call(op, dst, call.operand("lhs"), call.operand("rhs"))
            case "lhs":
                return _call(op, dst, dst, call.operand("src"))
            case "rhs":
                return _call(op, dst, call.operand("src"), dst)
            case _:
                raise InternalError(f"unknown tk op form {form}")
    return lower


def _map_rows(prefix: str) -> dict[str, Row]:
    rows = {f"{prefix}copy": _map_row("copy", "unary")}
    rows.update({f"{prefix}{k}": _map_row(k, "0ary") for k in CONSTANTS})
    rows.update({f"{prefix}{k}": _map_row(k, "unary") for k in UNARY})
    for op in BINARY:
        for form in ("3op", "lhs", "rhs"):
            rows[f"{prefix}{op}_{form}"] = _map_row(op, form)
        rows[f"{prefix}{op}_3op_scalar"] = _map_row(op, "3op")
        rows[f"{prefix}{op}_lhs_scalar"] = _map_row(op, "lhs")
    rows[f"{prefix}add_reduce"] = rows[f"{prefix}add_reduce_scalar"] = _map_row("add", "lhs")
    return rows


def _causal(constant: str, transposed: bool) -> Row:
    """Per 16 x 16 subtile: wholly masked ones are filled, the diagonal one is masked by
    ThunderKittens, as the mask `r + row_offset {<,>} c + col_offset` (offsets multiples of
    16) selects whole subtiles or the diagonal."""
    cmp, op = (">", "make_causal_t") if transposed else ("<", "make_causal")

    def lower(call: TkCall) -> list[str]:
        dst = call.obj("dst")
        return ["{",
                f"    using exo_tk_rt = std::remove_reference_t<decltype({dst})>;",
                "    using exo_tk_sub = ::kittens::rt<typename exo_tk_rt::T, 16, 16>;",
                "    const auto exo_tk_val = ::kittens::base_types::constants<typename "
                f"exo_tk_rt::T>::{constant}();",
                "    #pragma unroll",
                "    for (int exo_i = 0; exo_i < exo_tk_rt::height; exo_i++) {",
                "        #pragma unroll",
                "        for (int exo_j = 0; exo_j < exo_tk_rt::width; exo_j++) {",
                f"            const int exo_delta = 16 * exo_i - 16 * exo_j + static_cast<int>("
                f"{call.cargs['row_offset']}) - static_cast<int>({call.cargs['col_offset']});",
                "            exo_tk_sub exo_s;",
                f"            exo_s.tiles[0][0] = {dst}.tiles[exo_i][exo_j];",
                f"            if (exo_delta {cmp} 0) ::kittens::warp::{constant}(exo_s);",
                f"            if (exo_delta == 0) ::kittens::warp::{op}(exo_s, exo_s, exo_tk_val);",
                f"            {dst}.tiles[exo_i][exo_j] = exo_s.tiles[0][0];",
                "        }",
                "    }",
                "}"]
    return lower


def _operands(op: str, *names: str) -> Row:
    """`::kittens::warp::op(...)` on the named tile and vector operands, in order."""
    return lambda call: _call(op, *(call.obj(n) for n in names))


def _vector_rows() -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for axis in ("row", "col"):
        for r in REDUCTIONS:  # dst = reduce(src) combined with dst
            rows[f"cuda_tk_{axis}_{r}"] = _operands(f"{axis}_{r}", "dst", "src", "dst")
        rows[f"cuda_tk_broadcast_{axis}"] = _operands(f"broadcast_{axis}", "dst", "src")
        for op in BY_VECTOR:
            rows[f"cuda_tk_{op}_{axis}"] = _operands(f"{op}_{axis}", "dst", "dst", "src")
    for c in CONSTANTS:
        rows[f"cuda_tk_make_causal_{c}"] = _causal(c, False)
        rows[f"cuda_tk_make_causal_t_{c}"] = _causal(c, True)
    return rows


def _gmem(call: TkCall, side: str) -> str:
    """A `[size0, size1]` GMEM window (rows contiguous) as a global layout."""
    view = call.views[side]
    if len(view.strides) != 2:
        raise InternalError(f"{view.base}: a 2-D GMEM window expected")
    return (f"exo_tk_gmem<{call.elem(side)}>{{{view.base}, {view.strides[0]}, "
            f"{call.size('size0')}, {call.size('size1')}}}")


def _smem_tile(call: TkCall, side: str, rows: int, cols: int, inner: int) -> str:
    """A window `[outer, rows, inner]` (or `[rows, inner]`) of swizzled SMEM as a shared
    subtile whose data starts at the window: element (r, c) is window element
    [c / inner, r, c % inner], the outer stride being `under * inner`."""
    view = call.views[side]
    if view.swizzle == 0 or view.strides[-1] != "1" or view.strides[-2] != str(inner):
        raise Unsupported(f"ThunderKittens SMEM tile {view.base} with strides {view.strides}",
                          None, code="ERR-L06", rule="LANG-8.7")
    under = rows if len(view.strides) < 3 else int(view.strides[-3]) // inner
    return (f"exo_tk_smem_tile<{call.elem(side)}, {under}, {rows}, {cols}, {view.swizzle}>"
            f"({view.base})")


def _rs(inner: int, store: bool) -> Row:
    """Register tile <-> SMEM `[outer_cols, rows, inner]`."""
    def lower(call: TkCall) -> list[str]:
        side = "dst" if store else "src"
        smem = _smem_tile(call, side, call.size("rows"), inner * call.size("outer_cols"), inner)
        reg = call.obj("src" if store else "dst")
        verb = f"store(exo_tk_s, {reg})" if store else f"load({reg}, exo_tk_s)"
        return ["{", f"    auto exo_tk_s = {smem};", f"    ::kittens::warp::{verb};", "}"]
    return lower


_COORD = "::kittens::coord<>(0, 0, 0, 0)"


def _rg(store: bool) -> Row:
    """Register tile <-> GMEM `[size0, size1]`."""
    if store:
        return lambda call: _call("store", _gmem(call, "dst"), call.obj("src"), _COORD)
    return lambda call: _call("load", call.obj("dst"), _gmem(call, "src"), _COORD)


def _sg(store: bool) -> Row:
    """Dense swizzled SMEM `[size0, size1]` <-> GMEM."""
    def lower(call: TkCall) -> list[str]:
        side = "src" if store else "dst"
        size0, size1 = call.size("size0"), call.size("size1")
        smem = _smem_tile(call, side, size0, size1, size1)
        gmem = _gmem(call, "dst" if store else "src")
        verb = "store(exo_tk_g, exo_tk_s, " if store else "load(exo_tk_s, exo_tk_g, "
        return ["{", f"    auto exo_tk_s = {smem};", f"    auto exo_tk_g = {gmem};",
                f"    ::kittens::warp::{verb}{_COORD});", "}"]
    return lower


def _vec_rs(store: bool) -> Row:
    """Register vector <-> contiguous SMEM, as a ThunderKittens shared vector."""
    def lower(call: TkCall) -> list[str]:
        side = "dst" if store else "src"
        shared = (f"(*reinterpret_cast<::kittens::sv<{call.elem(side)}, "
                  f"{call.size('length')}>*>({call.views[side].base}))")
        reg = call.obj("src" if store else "dst")
        return _call("store", shared, reg) if store else _call("load", reg, shared)
    return lower


def _copy_rows() -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for store, verb in ((False, "load"), (True, "store")):
        rows.update({f"cuda_tk_{verb}_rs_inner_cols_{n}": _rs(n, store) for n in INNER_COLS})
        rows[f"cuda_tk_{verb}_rg"] = _rg(store)
        rows[f"cuda_tk_{verb}_sg"] = _sg(store)
        rows[f"cuda_tk_{verb}_vec_rs"] = _vec_rs(store)
    return rows


def _rows() -> dict[str, Row]:
    rows = {**_map_rows("cuda_tk_tile_"), **_map_rows("cuda_tk_vec_"), **_vector_rows(),
            **_copy_rows()}
    rows["cuda_tk_vec_copy_layout"] = rows["cuda_tk_vec_copy"]
    rows.update({k.removesuffix("ty"): v for k, v in list(rows.items()) if k.endswith("_infty")})
    return rows


TK_ROWS: Mapping[str, Row] = MappingProxyType(_rows())

HELPERS = r"""#ifndef EXO_THUNDERKITTENS
#define EXO_THUNDERKITTENS
// TK-4: ThunderKittens (https://github.com/HazyResearch/ThunderKittens): compile with
// -std=c++20 --extended-lambda --expt-relaxed-constexpr -I THUNDERKITTENS/include
#include <type_traits>
#include "kittens.cuh"

// A rows x cols GMEM window as a ThunderKittens global layout: rows `row_stride` elements
// apart, each contiguous.
template <typename T>
struct exo_tk_gmem
{
    using identifier = ::kittens::ducks::gl::identifier;
    using T2 = typename ::kittens::base_types::packing<T>::packed_type;
    using dtype = T;
    T* ptr;
    int64_t row_stride;
    int rows, cols;
    __device__ T& operator[](const ::kittens::coord<::kittens::ducks::default_type>& at) const
    {
        return ptr[at.r * row_stride + at.c];
    }
    template <int axis> __device__ size_t stride() const
    {
        return axis == 3 ? 1 : axis == 2 ? static_cast<size_t>(row_stride) : 0;
    }
    template <int axis> __device__ size_t shape() const
    {
        return axis == 3 ? cols : axis == 2 ? rows : 1;
    }
};

// A window of swizzled SMEM [outer][Under][inner] as a Rows x Cols shared subtile starting
// at `data` (the swizzle is by address, as exo_swizzled's).
template <typename T, int Under, int Rows, int Cols, int Swizzle>
__device__ auto exo_tk_smem_tile(T* data)
{
    using exo_st = ::kittens::st<T, Under, Cols, true, Swizzle>;
    ::kittens::st_subtile<exo_st, Rows, Cols> sub(*reinterpret_cast<exo_st*>(data), int2{0, 0});
    return sub;
}
#endif
"""
