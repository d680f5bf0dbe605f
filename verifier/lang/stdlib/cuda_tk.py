"""ThunderKittens-backed memories and copies (upstream's `exo.platforms.cuda_tk`), as data.

A `CudaTkWarpTile(rows, cols, layout)` is a warp's register tile (ThunderKittens `rt`), a
`CudaTkWarpVec(length, layout)` a warp's register vector (`rv`): distributed memories whose
native unit is the warp, accessed whole by instrs at `cuda_warp` (family `rmem_tk`: the
register qual-tls of SEM-3.3). The copies move tiles between GMEM, swizzled SMEM and registers,
in order (`cuda_in_order_instr`); the SMEM side of an SMEM<->register copy is a dense
`[outer_cols, rows, N]` tile whose row of N elements is the swizzle width. Tile and vector
arithmetic is in `cuda_tk_ops`. Rules: LANG-3.6, LANG-4.2, LANG-6.4 (specs/upstream_api.md TK-1).

The Sm90 ThunderKittens wgmma tiles and instrs (`Sm90_TkRmemTileD`, `Sm90_tk_*`) are in
`sm90_tk_mma`. Non-goals: fp8 element types (e4m3, e5m2, e8m0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verifier.lang.stdlib import units
from verifier.lang.stdlib.instrs import Instr, InstrParam
from verifier.lang.stdlib.memories import Memory, Sm90_SmemSwizzled
from verifier.lang.stdlib.scalars import ScalarInfo
from verifier.lang.stdlib.timelines import InstrTL

TILE_LAYOUTS = ("row", "col")
VEC_LAYOUTS = ("align", "ortho", "naive")
TK_TYPES = ("f32", "f16", "bf16")  # the element types served (upstream adds fp8)
INNER_COLS = (8, 16, 32, 64, 128)  # the SMEM row widths of the register<->SMEM copies
_BASES = ("CudaBasicDeviceVisible",)


@dataclass(frozen=True, slots=True)
class TkTile(Memory):
    """`CudaTkWarpTile(rows, cols, layout)`; params (rows, cols, layout)."""

    @property
    def rows(self) -> int:
        return int(self.params[0])

    @property
    def cols(self) -> int:
        return int(self.params[1])

    @property
    def layout(self) -> str:
        return str(self.params[2])

    @property
    def row_vec(self) -> "TkVec":
        """The vector a column reduction writes (one element per column)."""
        return CudaTkWarpVec(self.cols, "align" if self.layout == "row" else "ortho")

    @property
    def col_vec(self) -> "TkVec":
        """The vector a row reduction writes (one element per row)."""
        return CudaTkWarpVec(self.rows, "ortho" if self.layout == "row" else "align")


@dataclass(frozen=True, slots=True)
class TkVec(Memory):
    """`CudaTkWarpVec(length, layout)`; params (length, layout)."""

    @property
    def length(self) -> int:
        return int(self.params[0])

    @property
    def layout(self) -> str:
        return str(self.params[1])


def CudaTkWarpTile(r: int, c: int, layout: str = "row") -> TkTile:
    """A warp's register tile of r x c elements (r, c multiples of 16). LANG-6.4"""
    if not isinstance(r, int) or not isinstance(c, int) or r % 16 or c % 16 or r <= 0 or c <= 0:
        raise ValueError(f"CudaTkWarpTile requires positive r={r} and c={c} divisible by 16")
    if layout not in TILE_LAYOUTS:
        raise ValueError(f"CudaTkWarpTile layout must be one of {TILE_LAYOUTS}, not {layout!r}")
    return TkTile("CudaTkWarpTile", "rmem_tk", "", "rwc", units.cuda_warp, False, True,
                  (r, c, layout), bases=_BASES, packed_dims=2)


def CudaTkWarpVec(length: int, layout: str) -> TkVec:
    """A warp's register vector of `length` elements (a multiple of 16). LANG-6.4"""
    if not isinstance(length, int) or length % 16 or length <= 0:
        raise ValueError(f"CudaTkWarpVec requires positive length={length} divisible by 16")
    if layout not in VEC_LAYOUTS:
        raise ValueError(f"CudaTkWarpVec layout must be one of {VEC_LAYOUTS}, not {layout!r}")
    return TkVec("CudaTkWarpVec", "rmem_tk", "", "rwc", units.cuda_warp, False, True,
                 (length, layout), bases=_BASES, packed_dims=1)


def bits(kw: dict[str, Any], name: str) -> int:
    return ScalarInfo(kw[name]).bits


def types_check(same: bool) -> Any:
    """valid_num_types of upstream's tk instrs: any pair of served types, or one type."""
    def check(kw: dict[str, Any]) -> str | None:
        given = [kw[k] for k in ("dst", "src", "lhs", "rhs") if k in kw]
        bad = [t for t in given if t not in TK_TYPES]
        if bad:
            return f"element type {bad[0]} is not one of {', '.join(TK_TYPES)}"
        if same and len(set(given)) > 1:
            return f"the element types must be the same, not {', '.join(given)}"
        return None
    return check


def tile_check(rows: str, cols: str, same: bool) -> Any:
    """Tile sizes (multiples of 16), layout and element types of a tile instr (ERR-P07)."""
    def check(kw: dict[str, Any]) -> str | None:
        if kw[rows] % 16 or kw[cols] % 16 or kw[rows] <= 0 or kw[cols] <= 0:
            return f"{rows}={kw[rows]} and {cols}={kw[cols]} must be positive multiples of 16"
        if kw.get("layout", "row") not in TILE_LAYOUTS:
            return f"layout must be one of {TILE_LAYOUTS}, not {kw['layout']!r}"
        return types_check(same)(kw)
    return check


def tile_param(name: str, access: str, rows: str, cols: str) -> InstrParam:
    """A register tile argument of shape (kw[rows], kw[cols]) in the call's layout."""
    return InstrParam(name, "tensor", access, "CudaTkWarpTile",
                      lambda kw: (kw[rows], kw[cols]),
                      formal_params=lambda kw: (kw[rows], kw[cols], kw.get("layout", "row")))


_IN_ORDER = InstrTL.cuda_in_order_instr


def _rs(inner: int, store: bool) -> Instr:
    """Register tile <-> SMEM `[outer_cols, rows, inner]` (RMEM[r, c] = SMEM[c / inner, r,
    c % inner]); the SMEM tile is `Sm90_SmemSwizzled(inner * bits / 8)`, rows `inner` apart."""
    smem_side = "dst" if store else "src"
    smem = InstrParam(smem_side, "tensor", "w" if store else "r", "Sm90_SmemSwizzled",
                      lambda kw: (kw["outer_cols"], kw["rows"], inner),
                      formal_params=lambda kw: (inner * bits(kw, smem_side) // 8,),
                      row_stride=inner)
    tile = InstrParam("src" if store else "dst", "tensor", "r" if store else "w",
                      "CudaTkWarpTile", lambda kw: (kw["rows"], inner * kw["outer_cols"]),
                      formal_params=lambda kw: (kw["rows"], inner * kw["outer_cols"], "row"))

    def check(kw: dict[str, Any]) -> str | None:
        problem = tile_check("rows", "cols", False)({**kw, "cols": inner * kw["outer_cols"]})
        swizzle = inner * bits(kw, smem_side) // 8 if problem is None else 0
        if problem is None and swizzle not in (32, 64, 128):
            return (f"the SMEM row of {inner} {kw[smem_side]} is {swizzle} bytes; it must be "
                    "a swizzle of 32, 64 or 128")
        return problem
    name = f"cuda_tk_{'store' if store else 'load'}_rs_inner_cols_{inner}"
    return Instr(name, (smem, tile) if store else (tile, smem), _IN_ORDER, units.cuda_warp,
                 ("rows", "outer_cols"), check, precisions=("dst", "src"))


def _rg(store: bool) -> Instr:
    """Register tile <-> GMEM `[size0, size1]` (rows contiguous)."""
    tile = tile_param("src" if store else "dst", "r" if store else "w", "size0", "size1")
    gmem = InstrParam("dst" if store else "src", "tensor", "w" if store else "r",
                      "CudaGmemLinear", lambda kw: (kw["size0"], kw["size1"]))
    return Instr(f"cuda_tk_{'store' if store else 'load'}_rg",
                 (gmem, tile) if store else (tile, gmem), _IN_ORDER, units.cuda_warp,
                 ("size0", "size1"), tile_check("size0", "size1", False),
                 precisions=("dst", "src"), extras=("layout",))


def _sg(store: bool) -> Instr:
    """Dense swizzled SMEM `[size0, size1]` <-> GMEM, by one warp, not asynchronous."""
    side = "src" if store else "dst"
    smem = InstrParam(side, "tensor", "r" if store else "w", "Sm90_SmemSwizzled",
                      lambda kw: (kw["size0"], kw["size1"]),
                      formal_params=lambda kw: (kw["size1"] * bits(kw, side) // 8,),
                      row_stride="size1")  # stride(smem, 0) == size1: dense rows
    gmem = InstrParam("dst" if store else "src", "tensor", "w" if store else "r",
                      "CudaGmemLinear", lambda kw: (kw["size0"], kw["size1"]))

    def check(kw: dict[str, Any]) -> str | None:
        problem = tile_check("size0", "size1", True)(kw)
        swizzle = kw["size1"] * bits(kw, side) // 8 if problem is None else 0
        if problem is None and swizzle not in (32, 64, 128):
            return (f"size1={kw['size1']} {kw[side]} is a {swizzle}-byte SMEM row; it must be "
                    "a swizzle of 32, 64 or 128")
        return problem
    return Instr(f"cuda_tk_{'store' if store else 'load'}_sg",
                 (gmem, smem) if store else (smem, gmem), _IN_ORDER, units.cuda_warp,
                 ("size0", "size1"), check, precisions=("dst", "src"))


def vec_param(name: str, access: str, layout_key: str = "layout") -> InstrParam:
    return InstrParam(name, "tensor", access, "CudaTkWarpVec", lambda kw: (kw["length"],),
                      formal_params=lambda kw: (kw["length"], kw[layout_key]))


def vec_check(same: bool, layouts: tuple[str, ...] = ("layout",)) -> Any:
    def check(kw: dict[str, Any]) -> str | None:
        if kw["length"] % 16 or kw["length"] <= 0:
            return f"length={kw['length']} must be a positive multiple of 16"
        for key in layouts:
            if kw.get(key) not in VEC_LAYOUTS:
                return f"{key} must be one of {VEC_LAYOUTS}, not {kw.get(key)!r}"
        return types_check(same)(kw)
    return check


def _vec_rs(store: bool) -> Instr:
    """Register vector <-> contiguous `CudaSmemLinear` vector."""
    vec = vec_param("src" if store else "dst", "r" if store else "w")
    smem = InstrParam("dst" if store else "src", "tensor", "w" if store else "r",
                      "CudaSmemLinear", lambda kw: (kw["length"],))
    return Instr(f"cuda_tk_{'store' if store else 'load'}_vec_rs",
                 (smem, vec) if store else (vec, smem), _IN_ORDER, units.cuda_warp,
                 ("length",), vec_check(False), precisions=("dst", "src"), extras=("layout",))


def _copies() -> dict[str, Instr]:
    out = {i.name: i for inner in INNER_COLS for i in (_rs(inner, False), _rs(inner, True))}
    for store in (False, True):
        for make in (_rg, _sg, _vec_rs):
            instr = make(store)
            out[instr.name] = instr
    return out


TK_COPIES: dict[str, Instr] = _copies()


@dataclass(frozen=True, slots=True)
class CudaTkRsInstrAdvice:
    """Which register<->SMEM copy, tile and SMEM memory fit a tile (upstream's advice)."""

    instr: Instr
    rmem: TkTile
    smem: Memory
    swizzle_elements: int
    outer_cols: int
    rows: int
    inner_cols: int


def _advice(size0: int, size1: int, dst: Any, src: Any, swizzle: int,
            store: bool) -> CudaTkRsInstrAdvice:
    if size0 % 16 or size1 % 16 or swizzle not in (32, 64, 128):
        raise ValueError(f"no ThunderKittens copy for a {size0} x {size1} tile with swizzle "
                         f"{swizzle} (sizes multiples of 16, swizzle 32, 64 or 128)")
    inner = 8 * swizzle // ScalarInfo(dst if store else src).bits
    if size1 % inner:
        raise ValueError(f"size1={size1} needs to be divisible by {inner} for swizzle={swizzle}")
    base = TK_COPIES[f"cuda_tk_{'store' if store else 'load'}_rs_inner_cols_{inner}"]
    instr = base(rows=size0, outer_cols=size1 // inner, dst=dst, src=src)
    return CudaTkRsInstrAdvice(instr, CudaTkWarpTile(size0, size1, "row"),
                               Sm90_SmemSwizzled(swizzle), inner, size1 // inner, size0, inner)


def cuda_tk_load_rs_advice(size0: int, size1: int, *, dst: Any, src: Any,
                           swizzle: int) -> CudaTkRsInstrAdvice:
    return _advice(size0, size1, dst, src, swizzle, store=False)


def cuda_tk_store_rs_advice(size0: int, size1: int, *, dst: Any, src: Any,
                            swizzle: int) -> CudaTkRsInstrAdvice:
    return _advice(size0, size1, dst, src, swizzle, store=True)
