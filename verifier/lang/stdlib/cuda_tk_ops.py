"""ThunderKittens tile and vector arithmetic (upstream's `tk_tile_ops`, `tk_vec_ops`) as data.

Every op is one warp (`cuda_warp`) updating whole register tiles or vectors in order; its
parameters say which operand is read, written, or read and written (SEM-4.2), so the machine
and the encoder need nothing of their own. `OPS` is the table: name -> (shape, operands),
built from the families upstream generates (maps, causal masks, reductions to vectors,
broadcasts from vectors). A causal mask reads and writes the whole tile (the lowering copies
each 16 x 16 subtile out and back). The `*_inf` names are upstream's aliases of `*_infty`.
Rules: LANG-3.6, LANG-4.2 (specs/upstream_api.md TK-2).
"""

from __future__ import annotations

from verifier.lang.stdlib import units
from verifier.lang.stdlib.cuda_tk import tile_check, tile_param, vec_check, vec_param
from verifier.lang.stdlib.instrs import Instr, InstrParam
from verifier.lang.stdlib.timelines import InstrTL

CONSTANTS = ("zero", "one", "pos_infty", "neg_infty")
UNARY = ("exp", "exp2", "log", "log2", "abs", "relu")
BINARY = ("max", "min", "add", "sub", "mul", "div")
REDUCTIONS = ("max", "min", "sum", "prod")
BY_VECTOR = ("add", "sub", "mul", "div")

# operand forms of a binary op: (name suffix, ((operand, access), ...)); "s" marks a scalar
_BINARY_FORMS = (
    ("3op", (("dst", "w"), ("lhs", "r"), ("rhs", "r"))),
    ("3op_scalar", (("dst", "w"), ("lhs", "r"), ("rhs", "rs"))),
    ("lhs", (("dst", "rw"), ("src", "r"))),
    ("lhs_scalar", (("dst", "rw"), ("src", "rs"))),
    ("rhs", (("dst", "rw"), ("src", "r"))),
)
_REDUCE_FORMS = (("reduce", (("dst", "rw"), ("src", "r"))),
                 ("reduce_scalar", (("dst", "rw"), ("src", "rs"))))

Operands = tuple[tuple[str, str], ...]


def _maps() -> dict[str, tuple[Operands, bool]]:
    """Elementwise ops shared by tiles and vectors: suffix -> (operands, any type pair)."""
    out: dict[str, tuple[Operands, bool]] = {"copy": ((("dst", "w"), ("src", "r")), True)}
    out.update({c: ((("dst", "w"),), False) for c in CONSTANTS})
    out.update({u: ((("dst", "w"), ("src", "r")), False) for u in UNARY})
    for op in BINARY:
        forms = _BINARY_FORMS + (_REDUCE_FORMS if op == "add" else ())
        out.update({f"{op}_{form}": (operands, False) for form, operands in forms})
    return out


_IN_ORDER = InstrTL.cuda_in_order_instr
_SCALAR = "CudaBasicDeviceVisible"


def _scalar(name: str) -> InstrParam:
    return InstrParam(name, "scalar", "r", _SCALAR)


def _tile_op(name: str, operands: Operands, any_pair: bool) -> Instr:
    params = tuple(_scalar(n) if a == "rs" else tile_param(n, a, "rows", "cols")
                   for n, a in operands)
    return Instr(name, params, _IN_ORDER, units.cuda_warp, ("rows", "cols"),
                 tile_check("rows", "cols", not any_pair),
                 precisions=tuple(n for n, _ in operands), extras=("layout",))


def _causal(name: str) -> Instr:
    offsets = (InstrParam("row_offset", "index"), InstrParam("col_offset", "index"))
    return Instr(name, offsets + (tile_param("dst", "rw", "rows", "cols"),), _IN_ORDER,
                 units.cuda_warp, ("rows", "cols"), tile_check("rows", "cols", True),
                 precisions=("dst",), extras=("layout",))


def _vector_of(axis: str) -> InstrParam:
    """The vector operand of a row op (one element per row) or a column op."""
    return InstrParam("src", "tensor", "r", "CudaTkWarpVec",
                      lambda kw: (kw[axis + "s"],),
                      formal_params=lambda kw: _vec_memory(kw, axis))


def _vec_memory(kw: dict[str, object], axis: str) -> tuple[object, ...]:
    """(length, layout) of `col_vec` (axis "row") or `row_vec` (axis "col") of the tile."""
    layout = kw.get("layout", "row")
    aligned = (axis == "col") == (layout == "row")
    return (kw[axis + "s"], "align" if aligned else "ortho")


def _reduction(name: str, axis: str) -> Instr:
    """dst[r] (axis "row") or dst[c] (axis "col") combined with every element of that line."""
    dst = InstrParam("dst", "tensor", "rw", "CudaTkWarpVec", lambda kw: (kw[axis + "s"],),
                     formal_params=lambda kw: _vec_memory(kw, axis))
    return Instr(name, (dst, tile_param("src", "r", "rows", "cols")), _IN_ORDER,
                 units.cuda_warp, ("rows", "cols"), tile_check("rows", "cols", True),
                 precisions=("dst", "src"), extras=("layout",))


def _by_vector(name: str, axis: str, access: str) -> Instr:
    """dst[r, c] op= src[r] (axis "row") or src[c]; a broadcast writes dst = src."""
    return Instr(name, (tile_param("dst", access, "rows", "cols"), _vector_of(axis)),
                 _IN_ORDER, units.cuda_warp, ("rows", "cols"), tile_check("rows", "cols", True),
                 precisions=("dst", "src"), extras=("layout",))


def _tile_ops() -> dict[str, Instr]:
    out = {f"cuda_tk_tile_{k}": _tile_op(f"cuda_tk_tile_{k}", ops, pair)
           for k, (ops, pair) in _maps().items()}
    for c in CONSTANTS:
        for causal in ("make_causal", "make_causal_t"):
            out[f"cuda_tk_{causal}_{c}"] = _causal(f"cuda_tk_{causal}_{c}")
    for axis in ("row", "col"):
        for r in REDUCTIONS:
            out[f"cuda_tk_{axis}_{r}"] = _reduction(f"cuda_tk_{axis}_{r}", axis)
        out[f"cuda_tk_broadcast_{axis}"] = _by_vector(f"cuda_tk_broadcast_{axis}", axis, "w")
        for op in BY_VECTOR:
            out[f"cuda_tk_{op}_{axis}"] = _by_vector(f"cuda_tk_{op}_{axis}", axis, "rw")
    return out


def _vec_op(name: str, operands: Operands, any_pair: bool) -> Instr:
    params = tuple(_scalar(n) if a == "rs" else vec_param(n, a) for n, a in operands)
    return Instr(name, params, _IN_ORDER, units.cuda_warp, ("length",), vec_check(not any_pair),
                 precisions=tuple(n for n, _ in operands), extras=("layout",))


def _vec_ops() -> dict[str, Instr]:
    out = {f"cuda_tk_vec_{k}": _vec_op(f"cuda_tk_vec_{k}", ops, pair)
           for k, (ops, pair) in _maps().items()}
    name = "cuda_tk_vec_copy_layout"
    out[name] = Instr(name, (vec_param("dst", "w", "dst_layout"),
                             vec_param("src", "r", "src_layout")), _IN_ORDER, units.cuda_warp,
                      ("length",), vec_check(False, ("dst_layout", "src_layout")),
                      precisions=("dst", "src"), extras=("dst_layout", "src_layout"))
    return out


def _with_aliases(ops: dict[str, Instr]) -> dict[str, Instr]:
    """Upstream's `*_pos_inf` / `*_neg_inf` names for the `*_infty` ops (the same instr)."""
    return {**ops, **{k.removesuffix("ty"): v for k, v in ops.items() if k.endswith("_infty")}}


TILE_OPS: dict[str, Instr] = _with_aliases(_tile_ops())
VEC_OPS: dict[str, Instr] = _with_aliases(_vec_ops())
