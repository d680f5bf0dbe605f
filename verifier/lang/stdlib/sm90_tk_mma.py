"""Upstream's Sm90 ThunderKittens wgmma family (`exo.platforms.Sm90`, July 2026), as data.

`Sm90_TkRmemTileD(N)` is a warp's 16 x N ThunderKittens register tile that wgmma accumulates
into; four of them (one per warp, the leading `4` of every D window, COLL-5.12) make the
64 x N accumulator of a warpgroup. `Sm90_TkRmemTileA(K)` is the 16 x K register tile wgmma may
read A from. Both are `CudaTkWarpTile`s (the tk copies and ops take them) whose qual-tls
under `wgmma_async_instr` are the wgmma register ones (SEM-3.3, families `rmem_tk_d`,
`rmem_tk_a`). `Sm90_tk_zero_scale_d` (instr-tl `wgmma_zero_instr`) makes the next mma
overwrite D; `Sm90_tk_mma_{row,col,rmem}_{col,row}` are `wgmma.mma_async` at `cuda_warpgroup`
with A from row- or column-major swizzled SMEM or a register tile and B from SMEM.
Rules: LANG-3.6, LANG-4.2, LANG-6.4 (specs/upstream_api.md TK-5).

Non-goals: fp8 operands (e4m3, e5m2: not element types spork-verify serves) and the SMEM
descriptor's stride rule, which upstream checks when it emits code, not in `sync_check`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verifier.lang.stdlib import units
from verifier.lang.stdlib.cuda_tk import TkTile
from verifier.lang.stdlib.instrs import Instr, InstrParam
from verifier.lang.stdlib.scalars import ScalarInfo
from verifier.lang.stdlib.timelines import InstrTL

_BASES = ("CudaBasicDeviceVisible", "CudaTkWarpTile")
A_MODES = ("row", "col", "rmem")
B_MODES = ("col", "row")


@dataclass(frozen=True, slots=True)
class TkWgmmaTile(TkTile):
    """`Sm90_TkRmemTileD(N)` / `Sm90_TkRmemTileA(K)`: params (16, cols, "row") as any tk
    tile's, printed as upstream spells it."""

    def __str__(self) -> str:
        return f"{self.name}({self.cols})"


def _tile(name: str, family: str, cols: int) -> TkWgmmaTile:
    if not isinstance(cols, int) or isinstance(cols, bool) or cols <= 0 or cols % 16:
        raise ValueError(f"{name} requires a positive width divisible by 16, not {cols!r}")
    return TkWgmmaTile(name, family, "", "rwc", units.cuda_warp, False, True, (16, cols, "row"),
                       bases=_BASES, packed_dims=2)


def Sm90_TkRmemTileD(N: int) -> TkWgmmaTile:  # noqa: N802 - upstream's spelling
    """A warp's 16 x N wgmma accumulator tile. LANG-6.4"""
    return _tile("Sm90_TkRmemTileD", "rmem_tk_d", N)


def Sm90_TkRmemTileA(K: int) -> TkWgmmaTile:  # noqa: N802 - upstream's spelling
    """A warp's 16 x K wgmma A-operand tile. LANG-6.4"""
    return _tile("Sm90_TkRmemTileA", "rmem_tk_a", K)


def _valid_types(a_mode: str, b_mode: str) -> frozenset[tuple[str, str, str]]:
    """(D, A, B) element types upstream's wgmma accepts, less fp8: transposed operands need
    16-bit A and B, an f16 D no bf16/tf32 operands, A and B the same type, and no tf32 A in
    registers (ThunderKittens)."""
    out = set()
    for d in ("f16", "f32"):
        for ab in ("f16", "bf16", "f32"):
            if (a_mode == "col" or b_mode == "row") and ab == "f32":
                continue
            if d == "f16" and ab in ("bf16", "f32"):
                continue
            if a_mode == "rmem" and ab == "f32":
                continue
            out.add((d, ab, ab))
    return frozenset(out)


def _n(kw: dict[str, Any], b_mode: str) -> int:
    return kw["N"] if b_mode == "col" else 64 * kw["N64"]


def _mma_check(a_mode: str, b_mode: str) -> Any:
    valid = _valid_types(a_mode, b_mode)

    def check(kw: dict[str, Any]) -> str | None:
        types = (kw["D"], kw["A"], kw["B"])
        if types not in valid:
            return f"D, A, B = {types} is not a wgmma type combination ThunderKittens takes"
        n, swizzle = _n(kw, b_mode), kw.get("swizzle", 128)
        k_native = 256 // ScalarInfo(kw["A"]).bits
        if swizzle not in (32, 64, 128):
            return f"swizzle={swizzle} invalid for wgmma"
        if (a_mode == "col" or b_mode == "row") and swizzle != 128:
            return "Sorry, unimplemented, transpose for swizzle != 128"
        if n % 8 or not 8 <= n <= 256:
            return f"N={n} invalid for wgmma"
        if kw["K"] <= 0 or kw["K"] % k_native:
            return f"K={kw['K']} invalid for wgmma with a_type={kw['A']}"
        return None
    return check


def _d_param(access: str, cols: Any) -> InstrParam:
    """D: 4 warps' (16, N) tiles, the leading dimension distributed over the warps."""
    return InstrParam("D", "tensor", access, "Sm90_TkRmemTileD", lambda kw: (4, 16, cols(kw)),
                      distributed=(units.cuda_warp,),
                      formal_params=lambda kw: (16, cols(kw), "row"))


def _swizzled(kw: dict[str, Any]) -> tuple[int]:
    return (kw.get("swizzle", 128),)


def _a_param(a_mode: str) -> InstrParam:
    if a_mode == "rmem":
        return InstrParam("A", "tensor", "r", "Sm90_TkRmemTileA", lambda kw: (4, 16, kw["K"]),
                          distributed=(units.cuda_warp,),
                          formal_params=lambda kw: (16, kw["K"], "row"))
    shape = (lambda kw: (64, kw["K"])) if a_mode == "row" else (lambda kw: (kw["K"], 64))
    return InstrParam("A", "tensor", "r", "Sm90_SmemSwizzled", shape, formal_params=_swizzled)


def _b_param(b_mode: str) -> InstrParam:
    shape = (lambda kw: (kw["N"], kw["K"])) if b_mode == "col" else \
        (lambda kw: (kw["N64"], kw["K"], 64))
    return InstrParam("B", "tensor", "r", "Sm90_SmemSwizzled", shape, formal_params=_swizzled)


def _mma(a_mode: str, b_mode: str) -> Instr:
    name = f"Sm90_tk_mma_{a_mode}_{b_mode}"
    return Instr(name, (_d_param("rw", lambda kw: _n(kw, b_mode)), _a_param(a_mode),
                        _b_param(b_mode)),
                 InstrTL.wgmma_async_instr, units.cuda_warpgroup,
                 ("N" if b_mode == "col" else "N64", "K"), _mma_check(a_mode, b_mode),
                 precisions=("D", "A", "B"), extras=("swizzle",))


def _zero_check(kw: dict[str, Any]) -> str | None:
    if kw["D"] not in ("f16", "f32"):
        return f"D={kw['D']} must be f16 or f32"
    return None if kw["N"] > 0 and kw["N"] % 16 == 0 else f"N={kw['N']} must be a multiple of 16"


Sm90_tk_zero_scale_d = Instr(
    "Sm90_tk_zero_scale_d", (_d_param("w", lambda kw: kw["N"]),), InstrTL.wgmma_zero_instr,
    units.cuda_warpgroup, ("N",), _zero_check, precisions=("D",))

TK_MMA_INSTRS: dict[str, Instr] = {
    "Sm90_tk_zero_scale_d": Sm90_tk_zero_scale_d,
    **{i.name: i for i in (_mma(a, b) for b in B_MODES for a in A_MODES)},
}

__all__ = ["Sm90_TkRmemTileA", "Sm90_TkRmemTileD", "TK_MMA_INSTRS", "TkWgmmaTile"]
