"""Lowering rows of the Blackwell (sm_100a) instrs (specs/blackwell.md "Code generation").

Reads an `Sm100_*` instr call with the views of its operands; produces its C/PTX lines, and
`helpers` the `__device__` helpers the used rows call (`sm100_text.py`). TMEM allocation and
deallocation need per-kernel facts and are lowered by the device emitter (`sm100.py`).
Operand layouts the PTX ISA requires and the verifier does not prove are checked here and
refused with the rule (ERR-L06), never emitted wrongly.
Non-goals: tcgen05.shift, block-scaled kinds, M = 64 (no rows or refused).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from verifier.codegen import sm100_text
from verifier.codegen.exprs import View
from verifier.codegen.names import ctype_size
from verifier.codegen.sm100 import CTA_GROUP, keywords
from verifier.diagnostics import InternalError, SrcLoc, Unsupported
from verifier.lang.ir import ir

SWIZZLE_MODE = {32: 6, 64: 4, 128: 2}  # swizzle bytes -> descriptor bits 61-63
OPERAND_BYTES = 32  # bytes of K per row of one tcgen05.mma or tcgen05.cp.128x256b


def _refuse(what: str, loc: SrcLoc | None, rule: str = "BW-CG-3") -> Unsupported:
    return Unsupported(f"not lowered for sm_100a: {what}", loc, code="ERR-L06", rule=rule)


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


def _lane_zero(s: ir.Call, param: str, rule: str = "BW-CG-3") -> None:
    """A TMEM window of a 128-lane tcgen05 access starts at lane 0."""
    lane = _starts(s, param)[-2]
    if not (isinstance(lane, ir.Const) and lane.value == 0):
        raise _refuse(f"{param} must start at TMEM lane 0 (128 rows are lanes 0..127)", s.loc,
                      rule)


def _operand(s: ir.Call, view: View, param: str, rule: str = "BW-CG-3") -> str:
    """`exo_Sm100_smemDesc(...)` of a K-major tile: Sm90_SmemSwizzled(S) rows of exactly S
    bytes, 32 bytes of K per instruction, the K slice starting at a multiple of 32 bytes and
    the rows at a multiple of 8 (one swizzle atom). Rules: BW-CG-3, BW-CG-10"""
    esize = ctype_size(view.ctype)
    swizzle = view.swizzle
    row_elems = str(swizzle // esize) if swizzle else ""
    if swizzle not in SWIZZLE_MODE or view.scalar or view.strides != (row_elems, "1"):
        raise _refuse(f"operand {param} must be a K-major window of Sm90_SmemSwizzled(32, 64 or "
                      f"128) whose rows are the swizzle width, not swizzle {swizzle}, strides "
                      f"{list(view.strides)}", s.loc, rule)
    rows, cols = _starts(s, param)[-2:]
    k = OPERAND_BYTES // esize
    if not (_multiple_of(rows, 8) and _multiple_of(cols, k)):
        raise _refuse(f"operand {param} must start at a row that is a multiple of 8 and a "
                      f"column that is a multiple of {k} (one swizzle atom)", s.loc, rule)
    return f"exo_Sm100_smemDesc({view.address()}, {8 * swizzle}u, {SWIZZLE_MODE[swizzle]}u)"


def idesc(kind: str, a_type: str, m: int, n: int, loc: SrcLoc | None) -> int:
    """The instruction descriptor (PTX ISA "Instruction descriptor", kind::tf32 / kind::f16 /
    kind::f8f6f4): D f32 (bits 4-5 = 1), A and B types (bits 7-9, 10-12; E4M3 is 0 under
    kind::f8f6f4), K-major A and B (bits 15, 16 = 0),
    N >> 3 (bits 17-22), M >> 4 (bits 24-28). Rules: BW-CG-3"""
    types = {("tf32", "float"): 2, ("f16", "__half"): 0, ("f16", "__nv_bfloat16"): 1,
             ("f8f6f4", "__nv_fp8_e4m3"): 0}
    if (kind, a_type) not in types:
        raise _refuse(f"kind::{kind} with {a_type} operands", loc)
    ab = types[(kind, a_type)]
    return 1 << 4 | ab << 7 | ab << 10 | (n >> 3) << 17 | (m >> 4) << 24


Sm100Lowering = Callable[[ir.Call, Mapping[str, View], Mapping[str, str]], list[str]]


def _mma(kind: str, group: int, a_in_tmem: bool, zero: bool) -> Sm100Lowering:
    def lower(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
        """One thread issues `tcgen05.mma.cta_group::<group>.kind::<kind>`; enable-input-d is
        1 for the accumulating form (`D += A * B`) and 0 for the overwrite form `_zero`
        (`D = A * B`, BW-2.3), the same PTX otherwise. A pair MMA (M = 256) names the leader
        CTA's slices; the hardware takes the peer's at the same offsets. A in TMEM is its
        address (lanes 0..M-1, K columns). Rules: BW-CG-3, BW-CG-9, BW-CG-10"""
        kw = keywords(s)
        m, n = kw["M"], kw["N"]
        if m != 128 * group:
            raise _refuse(f"M = {m}: only M = 128 per CTA keeps row r of D in TMEM lane r (the "
                          "M = 64 layout interleaves lanes; PTX ISA \"Matrix fragments for "
                          "tcgen05.mma\")", s.loc)
        _lane_zero(s, "d")
        a, b, d = tensors["a"], tensors["b"], tensors["d"]
        if a.ctype != b.ctype:
            raise _refuse(f"A is {a.ctype} but B is {b.ctype}", s.loc)
        if a_in_tmem:
            _lane_zero(s, "a", "BW-CG-10")
        a_operand = a.base if a_in_tmem else _operand(s, a, "a")
        word = idesc(kind, a.ctype, m, n, s.loc)
        name = f"exo_Sm100_mma_{kind}{'_ts' if a_in_tmem else ''}_cta{group}"
        return [f"{name}({d.base}, {a_operand},",
                f"    {_operand(s, b, 'b')}, {word:#x}u, {0 if zero else 1}u);"]
    return lower


def _relinquish(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
    """Not emitted: a CTA runs the task body once per task it takes (the persistent task loop,
    LANG-8.3), and PTX forbids `tcgen05.alloc` after `tcgen05.relinquish_alloc_permit`; the
    permit is only a scheduling hint and has no memory effect (BW-1.4). Rules: BW-CG-2"""
    return ["// tcgen05.relinquish_alloc_permit: not emitted, the CTA may run further tasks "
            "that allocate (BW-CG-2)"]


def _ld_st(verb: str) -> Sm100Lowering:
    def lower(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
        """Each warp of the warpgroup loads (stores) its lane quarter. Rules: BW-CG-5,
        BW-CG-10"""
        tmem, regs = ("src", "dst") if verb == "Ld" else ("dst", "src")
        _lane_zero(s, tmem, "BW-CG-5")
        n = keywords(s)["N"]
        return [f"exo_Sm100_tmem{verb}32x32b_x{n}({tensors[regs].base}, {tensors[tmem].base});"]
    return lower


def _cp(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
    """One thread copies 128 rows of 32 bytes from SMEM (by descriptor) into TMEM lanes
    0..127: `tcgen05.cp.cta_group::1.128x256b`. Rules: BW-CG-10"""
    _lane_zero(s, "dst", "BW-CG-10")
    desc = _operand(s, tensors["src"], "src", "BW-CG-10")
    return [f'asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;" :: '
            f'"r"({tensors["dst"].base}), "l"({desc}) : "memory");']


def _zero(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
    """Rules: BW-CG-10"""
    return [f"exo_Sm100_zeroRow<{keywords(s)['N']}>({tensors['dst'].base});"]


def _store(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
    """Rules: BW-CG-5"""
    dst = tensors["dst"]
    if dst.scalar or len(dst.strides) != 2 or dst.swizzle:
        raise InternalError(f"{s.callee}: dst is not a linear 2-D window", s.loc)
    return [f"exo_Sm100_storeRow<{keywords(s)['N']}>({dst.base}, {dst.strides[0]}, "
            f"{dst.strides[1]}, {tensors['src'].base});"]


SM100_ROWS: Mapping[str, Sm100Lowering] = MappingProxyType({
    "Sm100_tmem_relinquish_alloc_permit": _relinquish,
    "Sm100_tmem_relinquish_alloc_permit_cta2": _relinquish,
    **{name: _mma(name.split("_")[2], group, "_ts_" in name, "_zero_" in name)
       for name, group in CTA_GROUP.items() if name.startswith("Sm100_mma_")},
    "Sm100_tmem_ld_32x32b_f32": _ld_st("Ld"),
    "Sm100_tmem_st_32x32b_f32": _ld_st("St"),
    "Sm100_tmem_cp_128x256b_f32": _cp,
    "Sm100_zero_d_f32": _zero,
    "Sm100_store_d_row_major_f32": _store,
})
_TILE_ROWS = {"Sm100_tmem_ld_32x32b_f32", "Sm100_tmem_st_32x32b_f32", "Sm100_zero_d_f32",
              "Sm100_store_d_row_major_f32"}


def helpers(calls: list[tuple[str, dict[str, int]]]) -> str:
    """The helpers the Sm100 rows of `calls` use ("" if none)."""
    names = {name for name, _ in calls}
    out = ""
    # one helper per (kind, group, A in TMEM): the overwrite form passes enable-input-d 0
    mmas = sorted({(name.split("_")[2], CTA_GROUP[name], "_ts_" in name) for name in names
                   if name.startswith("Sm100_mma_") and name in CTA_GROUP})
    if mmas or "Sm100_tmem_cp_128x256b_f32" in names:
        out += sm100_text.DESCRIPTOR
    out += "".join(sm100_text.mma_helper(*mma) for mma in mmas)
    for verb in ("ld", "st"):
        ns = sorted({kw["N"] for name, kw in calls if name == f"Sm100_tmem_{verb}_32x32b_f32"})
        out += "".join(sm100_text.ld_st_helper(verb, n) for n in ns)
    if names & _TILE_ROWS:
        out += sm100_text.ROWS
    return out
