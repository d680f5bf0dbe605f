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
    steps in whole tiles (`frag`), so only instrs reach elements. Rules: LANG-8.6, TK-4"""
    packed = 2 if isinstance(mem, TkTile) else 1
    lead = [str(d) for d in shard[:-packed]]
    return ([f"{tk_type(mem, elem)} {cname}[{prod(shard[:-packed])}];"],
            View(tk_type(mem, elem), cname, dense_strides(lead), drop, False, 1, "rmem_tk"))


def _obj(view: View) -> str:
    """The lvalue of the tile or vector a window of a tk allocation names."""
    if view.family != "rmem_tk":
        raise InternalError(f"{view.base} is not a ThunderKittens register window")
    return f"(*{atom(view.base)})"


Args = tuple[dict[str, View], dict[str, str], dict[str, object]]  # tensors, C args, keywords


def _call(op: str, *operands: str) -> list[str]:
    return [f"::kittens::warp::{op}({', '.join(operands)});"]


def _map_row(op: str, form: str) -> Callable[[Args], list[str]]:
    """Elementwise rows: the operand order of each form of upstream's tile and vector ops."""
    def lower(a: Args) -> list[str]:
        t, c, _ = a
        dst = _obj(t["dst"])
        arg = {k: (_obj(v) if not v.scalar else v.base) for k, v in t.items()} | c
        match form:
            case "0ary":
                return _call(op, dst)
            case "unary":
                return _call(op, dst, arg["src"])
            case "3op":
                return _call(op, dst, arg["lhs"], arg["rhs"])
            case "lhs" | "reduce":
                return _call(op, dst, dst, arg["src"])
            case "rhs":
                return _call(op, dst, arg["src"], dst)
            case _:
                raise InternalError(f"unknown tk op form {form}")
    return lower


def _map_rows(prefix: str) -> dict[str, Callable[[Args], list[str]]]:
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


def _causal(constant: str, transposed: bool) -> Callable[[Args], list[str]]:
    """Per 16 x 16 subtile: wholly masked ones are filled, the diagonal one is masked by
    ThunderKittens, as the mask `r + row_offset {<,>} c + col_offset` (offsets multiples of
    16) selects whole subtiles or the diagonal."""
    cmp, op = (">", "make_causal_t") if transposed else ("<", "make_causal")

    def lower(a: Args) -> list[str]:
        t, c, _ = a
        dst = _obj(t["dst"])
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
                f"{c['row_offset']}) - static_cast<int>({c['col_offset']});",
                "            exo_tk_sub exo_s;",
                f"            exo_s.tiles[0][0] = {dst}.tiles[exo_i][exo_j];",
                f"            if (exo_delta {cmp} 0) ::kittens::warp::{constant}(exo_s);",
                f"            if (exo_delta == 0) ::kittens::warp::{op}(exo_s, exo_s, exo_tk_val);",
                f"            {dst}.tiles[exo_i][exo_j] = exo_s.tiles[0][0];",
                "        }",
                "    }",
                "}"]
    return lower


def _vector_rows() -> dict[str, Callable[[Args], list[str]]]:
    rows: dict[str, Callable[[Args], list[str]]] = {}
    for axis in ("row", "col"):
        for r in REDUCTIONS:  # dst = reduce(src) combined with dst
            rows[f"cuda_tk_{axis}_{r}"] = lambda a, op=f"{axis}_{r}": _call(
                op, _obj(a[0]["dst"]), _obj(a[0]["src"]), _obj(a[0]["dst"]))
        rows[f"cuda_tk_broadcast_{axis}"] = lambda a, op=f"broadcast_{axis}": _call(
            op, _obj(a[0]["dst"]), _obj(a[0]["src"]))
        for op in BY_VECTOR:
            rows[f"cuda_tk_{op}_{axis}"] = lambda a, name=f"{op}_{axis}": _call(
                name, _obj(a[0]["dst"]), _obj(a[0]["dst"]), _obj(a[0]["src"]))
    for c in CONSTANTS:
        rows[f"cuda_tk_make_causal_{c}"] = _causal(c, False)
        rows[f"cuda_tk_make_causal_t_{c}"] = _causal(c, True)
    return rows


def _gmem(view: View, kw: dict[str, object], side: str) -> str:
    """A `[size0, size1]` GMEM window (rows contiguous) as a global layout."""
    if len(view.strides) != 2:
        raise InternalError(f"{view.base}: a 2-D GMEM window expected")
    return (f"exo_tk_gmem<{_TYPE[str(kw[side])]}>{{{view.base}, {view.strides[0]}, "
            f"{kw['size0']}, {kw['size1']}}}")


def _smem_tile(view: View, elem: str, rows: int, cols: int, inner: int) -> str:
    """A window `[outer, rows, inner]` (or `[rows, inner]`) of swizzled SMEM as a shared
    subtile whose data starts at the window: element (r, c) is window element
    [c / inner, r, c % inner], the outer stride being `under * inner`."""
    if view.swizzle == 0 or view.strides[-1] != "1" or view.strides[-2] != str(inner):
        raise Unsupported(f"ThunderKittens SMEM tile {view.base} with strides {view.strides}",
                          None, code="ERR-L06", rule="LANG-8.7")
    under = rows if len(view.strides) < 3 else int(view.strides[-3]) // inner
    return (f"exo_tk_smem_tile<{_TYPE[elem]}, {under}, {rows}, {cols}, {view.swizzle}>"
            f"({view.base})")


def _copy_rows() -> dict[str, Callable[[Args], list[str]]]:
    rows: dict[str, Callable[[Args], list[str]]] = {}
    for inner in INNER_COLS:
        def rs(a: Args, inner: int = inner, store: bool = False) -> list[str]:
            t, _, kw = a
            side = "dst" if store else "src"
            rows_, cols = int(kw["rows"]), inner * int(kw["outer_cols"])  # type: ignore[call-overload]
            smem = _smem_tile(t[side], str(kw[side]), rows_, cols, inner)
            reg = _obj(t["src" if store else "dst"])
            verb = "store(exo_tk_s, " + reg + ")" if store else "load(" + reg + ", exo_tk_s)"
            return ["{", f"    auto exo_tk_s = {smem};", f"    ::kittens::warp::{verb};", "}"]
        rows[f"cuda_tk_load_rs_inner_cols_{inner}"] = rs
        rows[f"cuda_tk_store_rs_inner_cols_{inner}"] = lambda a, f=rs: f(a, store=True)
    coord = "::kittens::coord<>(0, 0, 0, 0)"
    rows["cuda_tk_load_rg"] = lambda a: _call(
        "load", _obj(a[0]["dst"]), _gmem(a[0]["src"], a[2], "src"), coord)
    rows["cuda_tk_store_rg"] = lambda a: _call(
        "store", _gmem(a[0]["dst"], a[2], "dst"), _obj(a[0]["src"]), coord)

    def sg(a: Args, store: bool) -> list[str]:
        t, _, kw = a
        side = "src" if store else "dst"
        size0, size1 = int(kw["size0"]), int(kw["size1"])  # type: ignore[call-overload]
        smem = _smem_tile(t[side], str(kw[side]), size0, size1, size1)
        gmem = _gmem(t["dst" if store else "src"], kw, "dst" if store else "src")
        verb = "store(exo_tk_g, exo_tk_s, " if store else "load(exo_tk_s, exo_tk_g, "
        return ["{", f"    auto exo_tk_s = {smem};", f"    auto exo_tk_g = {gmem};",
                f"    ::kittens::warp::{verb}{coord});", "}"]
    rows["cuda_tk_load_sg"] = lambda a: sg(a, False)
    rows["cuda_tk_store_sg"] = lambda a: sg(a, True)

    def vec(a: Args, store: bool) -> list[str]:
        t, _, kw = a
        side = "dst" if store else "src"
        sv = (f"(*reinterpret_cast<::kittens::sv<{_TYPE[str(kw[side])]}, {kw['length']}>*>"
              f"({t[side].base}))")
        reg = _obj(t["src" if store else "dst"])
        return _call("store", sv, reg) if store else _call("load", reg, sv)
    rows["cuda_tk_load_vec_rs"] = lambda a: vec(a, False)
    rows["cuda_tk_store_vec_rs"] = lambda a: vec(a, True)
    return rows


def _rows() -> dict[str, Callable[[Args], list[str]]]:
    rows = {**_map_rows("cuda_tk_tile_"), **_map_rows("cuda_tk_vec_"), **_vector_rows(),
            **_copy_rows()}
    rows["cuda_tk_vec_copy_layout"] = rows["cuda_tk_vec_copy"]
    rows.update({k.removesuffix("ty"): v for k, v in list(rows.items()) if k.endswith("_infty")})
    return rows


TK_ROWS: Mapping[str, Callable[[Args], list[str]]] = MappingProxyType(_rows())

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
