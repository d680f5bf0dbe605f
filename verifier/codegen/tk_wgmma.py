"""CUDA text of upstream's Sm90 ThunderKittens wgmma family (TK-5; TK-CG-1..TK-CG-6).

Reads the views of `Sm90_TkRmemTileD(N)` / `Sm90_TkRmemTileA(K)` tiles (declared by `tk.alloc`:
a warp's accumulator is a ThunderKittens row tile that also carries wgmma's scale-d flag) and
calls of `Sm90_tk_zero_scale_d` and `Sm90_tk_mma_{row,col,rmem}_{col,row}`; produces one
`wgmma.mma_async` per 32 bytes of K on the tile's registers with SMEM matrix descriptors, and
the register pins that keep the compiler from moving tile accesses across `wgmma.fence` and
`wgmma.wait_group`. The register order is the PTX ISA's m64nNk* fragment layout read off
ThunderKittens' 16 x 16 row subtiles: per subtile, `data[0]` (row r, columns c, c + 1),
`data[1]` (row r + 8), `data[2]` (columns + 8), `data[3]` (both), which is the order of the
fragment's registers for the two n8 column blocks the subtile holds. Non-goals: fp8.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from verifier.codegen.exprs import View, atom
from verifier.codegen.tk import Row, TkCall
from verifier.diagnostics import Unsupported
from verifier.lang.stdlib.scalars import ScalarInfo
from verifier.lang.stdlib.sm90_tk_mma import A_MODES, B_MODES

PTX_TYPE = {"f32": "tf32", "bf16": "bf16", "f16": "f16"}  # A and B (f32 operands are tf32)
OPERAND_FAMILIES = ("rmem_tk_d", "rmem_tk_a")  # tiles a wgmma reads or writes


def _ints(view: View, what: str) -> list[int]:
    """The literal element strides of an SMEM operand window (TK-CG-3)."""
    try:
        return [int(s) for s in view.strides]
    except ValueError:
        raise Unsupported(f"{what}: wgmma operand {view.base} with non-literal strides "
                          f"{list(view.strides)}", None, code="ERR-L06", rule="TK-CG-3") from None


def descriptor(view: View, bits: int, k_major: bool, k: int, what: str) -> str:
    """C text of the matrix descriptor of an SMEM operand for the K slice starting at element
    k: a `[rows, inner]` or `[outer, rows, inner]` window of `Sm90_SmemSwizzled(S)` whose row
    stride is one swizzle row (S bytes) and whose inner stride is 1; leading byte offset = the
    outer stride (the next swizzle atom of an MN-major operand), stride byte offset = 8 rows.
    A K-major slice starts k elements along the row, an MN-major one k rows down.
    Rules: TK-CG-3"""
    strides = _ints(view, what)
    row = view.swizzle * 8 // bits
    if view.swizzle == 0 or len(strides) not in (2, 3) or strides[-2:] != [row, 1]:
        raise Unsupported(f"{what}: wgmma operand {view.base} must be a 2- or 3-dimensional "
                          f"window of Sm90_SmemSwizzled with strides [..., {row}, 1] "
                          f"({view.swizzle}-byte rows), not {list(view.strides)}", None,
                          code="ERR-L06", rule="TK-CG-3")
    outer = strides[0] if len(strides) == 3 else 1
    offset = k if k_major else k * row
    start = view.base if offset == 0 else f"({atom(view.base)} + {offset})"
    return (f"exo_tk_smemDesc<{view.swizzle}>({start}, {outer * bits // 8}u, "
            f"{8 * row * bits // 8}u)")


def _d_registers(obj: str, n: int, d_type: str) -> tuple[list[str], str]:
    """The accumulator's registers in fragment order, and their asm constraint (TK-CG-2)."""
    regs = []
    for t in range(n // 16):
        for r in range(4):
            data = f"{obj}.tiles[0][{t}].data[{r}]"
            if d_type == "f32":
                regs += [f"{data}.x", f"{data}.y"]
            else:
                regs.append(f"*reinterpret_cast<uint32_t*>(&{data})")
    return regs, "+f" if d_type == "f32" else "+r"


def _a_registers(obj: str, k: int) -> list[str]:
    """The A fragment of K slice k (16 columns of 16-bit elements): subtile k's four packed
    pairs, in the order of `_d_registers` (TK-CG-2)."""
    return [f"*reinterpret_cast<const uint32_t*>(&{obj}.tiles[0][{k}].data[{r}])"
            for r in range(4)]


def _asm(instr: str, outs: list[str], out_c: str, ins: list[tuple[str, list[str]]],
         scale: str, tail: str) -> list[str]:
    """One `asm volatile` of a wgmma: the D registers %0.. (in braces), each input (a list of
    several registers is one braced vector operand), then the scale-d predicate's source."""
    at = len(outs)
    operands, flat = [], []
    for c, texts in ins:
        names = [f"%{at + j}" for j in range(len(texts))]
        operands.append(names[0] if len(texts) == 1 else "{" + ", ".join(names) + "}")
        flat += [(c, x) for x in texts]
        at += len(texts)
    d_vec = "{" + ", ".join(f"%{i}" for i in range(len(outs))) + "}"
    return ['asm volatile("{\\n\\t.reg .pred exo_p;\\n\\t"',
            f'             "setp.ne.b32 exo_p, %{at}, 0;\\n\\t"',
            f'             "{instr} "',
            f'             "{d_vec}, {", ".join(operands)}, exo_p, {tail};\\n\\t}}"',
            "             : " + ", ".join(f'"{out_c}"({o})' for o in outs),
            "             : " + ", ".join(f'"{c}"({x})' for c, x in flat) +
            f', "r"({scale}));']


def _mma(a_mode: str, b_mode: str) -> Row:
    """`Sm90_tk_mma_<a>_<b>`: K / k_native wgmmas, each then setting scale-d to 1. Rules:
    TK-CG-2, TK-CG-3, TK-CG-4"""
    def lower(call: TkCall) -> list[str]:
        d_type, a_type = str(call.keywords["D"]), str(call.keywords["A"])
        n = call.size("N") if b_mode == "col" else 64 * call.size("N64")
        bits = ScalarInfo(a_type).bits
        k_native = 256 // bits
        instr = (f"wgmma.mma_async.sync.aligned.m64n{n}k{k_native}.{d_type}"
                 f".{PTX_TYPE[a_type]}.{PTX_TYPE[str(call.keywords['B'])]}")
        tail = "1, 1"  # imm-scale-a, imm-scale-b; then imm-trans-a (SMEM A), imm-trans-b
        if bits == 16:
            tail += ("" if a_mode == "rmem" else ", 1" if a_mode == "col" else ", 0") + \
                (", 1" if b_mode == "row" else ", 0")
        d = call.obj("D")
        outs, out_c = _d_registers(d, n, d_type)
        what = f"Sm90_tk_mma_{a_mode}_{b_mode}"
        lines = []
        for k in range(call.size("K") // k_native):
            ins = [("r", _a_registers(call.obj("A"), k))] if a_mode == "rmem" else \
                [("l", ["exo_descA"])]
            lines.append("{")
            if a_mode != "rmem":
                a_desc = descriptor(call.views["A"], bits, a_mode == "row", k * k_native, what)
                lines.append(f"    const uint64_t exo_descA = {a_desc};")
            b_desc = descriptor(call.views["B"], bits, b_mode == "col", k * k_native, what)
            lines.append(f"    const uint64_t exo_descB = {b_desc};")
            lines += ["    " + x for x in _asm(instr, outs, out_c, ins + [("l", ["exo_descB"])],
                                                 f"{d}.scale_d", tail)]
            lines += [f"    {d}.scale_d = 1;", "}"]
        return lines
    return lower


def _zero(call: TkCall) -> list[str]:
    """`Sm90_tk_zero_scale_d`: the next wgmma overwrites D. Rules: TK-CG-4"""
    return [f"{call.obj('D')}.scale_d = 0;"]


def _rows() -> dict[str, Row]:
    rows: dict[str, Row] = {"Sm90_tk_zero_scale_d": _zero}
    rows.update({f"Sm90_tk_mma_{a}_{b}": _mma(a, b) for a in A_MODES for b in B_MODES})
    return rows


TK_WGMMA_ROWS: Mapping[str, Row] = MappingProxyType(_rows())


def pin_lines(views: list[View]) -> list[str]:
    """Register pins of every whole wgmma tile allocation in `views`: before `wgmma.fence`
    (every register write is done) and after `wgmma.wait_group` (no register read moves above
    it). Rules: TK-CG-5"""
    return [f"exo_tk_pin({v.base}, {v.elems});" for v in views
            if v.family in OPERAND_FAMILIES and v.elems]


HELPERS = r"""#ifndef EXO_TK_WGMMA
#define EXO_TK_WGMMA
// TK-CG-1: an Sm90_TkRmemTileD tile: a ThunderKittens row tile (the tk ops take it as one)
// and the scale-d flag of its next wgmma (0: D is overwritten, not read).
template <typename Tile>
struct exo_tk_accumD : Tile
{
    int scale_d = 1;
};

// TK-CG-3: matrix descriptor of swizzled SMEM: start address, leading and stride byte
// offsets (16-byte units, 14 bits each), swizzle mode (1: 128 B, 2: 64 B, 3: 32 B).
template <int Swizzle>
static __device__ __forceinline__ uint64_t exo_tk_smemDesc(const void* smem, uint32_t lbo,
                                                          uint32_t sbo)
{
    static_assert(Swizzle == 32 || Swizzle == 64 || Swizzle == 128, "wgmma swizzle");
    const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    const uint64_t mode = Swizzle == 128 ? 1 : Swizzle == 64 ? 2 : 3;
    return static_cast<uint64_t>((addr & 0x3FFFFu) >> 4)
        | (static_cast<uint64_t>((lbo & 0x3FFFFu) >> 4) << 16)
        | (static_cast<uint64_t>((sbo & 0x3FFFFu) >> 4) << 32) | (mode << 62);
}

// TK-CG-5: every 32-bit register of `count` tiles is pinned here: the compiler neither sinks
// a write below nor hoists a read above this point (wgmma.fence, wgmma.wait_group).
template <typename Tile>
static __device__ __forceinline__ void exo_tk_pin(Tile* t, int count)
{
    static_assert(sizeof(t->tiles[0][0].data[0]) % 4 == 0, "32-bit register pairs");
    constexpr int words = sizeof(t->tiles[0][0].data[0]) / 4;
    for (int k = 0; k < count; k++) {
#pragma unroll
        for (int i = 0; i < Tile::height; i++) {
#pragma unroll
            for (int j = 0; j < Tile::width; j++) {
#pragma unroll
                for (int r = 0; r < Tile::packed_per_tile; r++) {
                    uint32_t* w = reinterpret_cast<uint32_t*>(&t[k].tiles[i][j].data[r]);
#pragma unroll
                    for (int x = 0; x < words; x++) {
                        asm volatile("" : "+r"(w[x]) :: "memory");
                    }
                }
            }
        }
    }
}
#endif
"""


def used(calls: list[tuple[str, dict[str, Any]]]) -> bool:
    """Whether any call is of the family (the file then needs `HELPERS` and ThunderKittens)."""
    return any(name in TK_WGMMA_ROWS for name, _ in calls)
