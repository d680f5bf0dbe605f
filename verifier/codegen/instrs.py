"""Lowering text of the closed instruction library (language.md §7.6, LANG-8.7).

Reads an instruction `Call` and the `Env` of its scope; produces C/PTX lines. The rows are data:
`HOST_LOWERINGS` and `DEVICE_LOWERINGS` map instr names to lowering functions, and
`helpers_for` returns the `__device__` helper functions that the used rows call (Sm80 tf32
fragments, PTX ISA layouts of mma.m16n8k8 / m16n8k4; wgmma rows from `wgmma.py`, tcgen05
rows from `sm100_rows.py`). TMA calls
are lowered by the device emitter (`tma.py`: they need the tensor map and the trailing
mbarrier slot). An instr without a row is refused as `Unsupported` (ERR-L06).
Non-goals: the mma on packed registers (endgame's `Sm80_mma_m16n8`: no row); the packed copies
have rows (CG-I2).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from verifier.codegen import sm100_rows, tk, tk_wgmma, wgmma
from verifier.codegen.exprs import Env, View, atom, c_add, c_mul, cexpr, window_view
from verifier.codegen.wgmma import WGMMA_ROWS, WgmmaLowering
from verifier.diagnostics import InternalError, RejectedInput, SporkError, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.instrs import INSTRS, Instr


@dataclass(frozen=True, slots=True)
class CallArgs:
    """Evaluated arguments of one call: C text of size/index params, views of tensor params."""

    call: ir.Call
    sizes: dict[str, str]
    tensors: dict[str, View]
    kwargs: dict[str, int]


def _evaluate(s: ir.Call, env: Env) -> CallArgs:
    instr = s.callee
    assert isinstance(instr, Instr)
    sizes: dict[str, str] = {}
    tensors: dict[str, View] = {}
    for param, arg in zip(instr.params, s.args):
        if param.kind == "tensor":
            if not isinstance(arg, ir.Window):
                raise InternalError(f"{instr.name}: argument {param.name} is not a window", s.loc)
            tensors[param.name] = window_view(arg, env)
        else:
            sizes[param.name] = cexpr(arg, env)
    kwargs = {k: v for k, v in s.kwargs if isinstance(v, int)}
    return CallArgs(s, sizes, tensors, kwargs)


def _unit_stride(args: CallArgs, name: str, dim: int) -> str:
    """The stride of `dim` of a window argument that must be contiguous there (ERR-L06 if it
    is a literal other than 1; a runtime stride is assumed 1)."""
    view = args.tensors[name]
    if view.scalar or not view.strides:
        return "1"
    stride = view.strides[dim]
    if re.fullmatch(r"-?[0-9]+", stride) and stride != "1":
        raise RejectedInput(f"{args.call.callee.name}: argument {name} must have stride 1 in "
                            f"dimension {dim}, not {stride}", args.call.loc, code="ERR-L06",
                            rule="LANG-8.7")
    return stride


# ---------------------------------------------------------------- host rows (LANG-6.5)

_COPY = re.compile(r"cudaMemcpyAsync_(htod|dtoh)_([1-5])(\w+)")
_SET = re.compile(r"cudaMemsetAsync0_([1-5])(\w+)")
_DIMS = "mnopq"  # the size parameters of a rank-r host copy, outermost first


def _host_nest(args: CallArgs, rank: int, names: tuple[str, ...],
               body: Callable[[dict[str, View], str, str], list[str]]) -> list[str]:
    """Host loops over the leading r - 2 dimensions of a rank-r copy (r > 2), each iteration a
    2-D (rank ≤ 2: the whole) operation: `body(views, rows, width)` with the views of `names`
    moved to the current slice, `rows` and `width` the C text of the last two extents (rows
    "1" for rank 1). Rules: LANG-6.5"""
    outer = _DIMS[:max(rank - 2, 0)]
    views = {n: args.tensors[n] for n in names}
    out, pad, offsets = [], "", {n: [] for n in names}
    for k, dim in enumerate(outer):
        i = f"exo_i{k}"
        out.append(f"{pad}for (int64_t {i} = 0; {i} < {atom(args.sizes[dim])}; {i}++) {{")
        pad += "    "
        for n in names:
            offsets[n].append(c_mul(i, views[n].strides[k]))
    if outer:
        views = {n: replace(v, base=f"({atom(v.base)} + {c_add(offsets[n])})",
                            strides=v.strides[len(outer):]) for n, v in views.items()}
    rows = args.sizes[_DIMS[rank - 2]] if rank >= 2 else "1"
    out += [pad + line for line in body(views, rows, args.sizes[_DIMS[rank - 1]])]
    return out + ["    " * (len(outer) - 1 - k) + "}" for k in range(len(outer))]


def _host_copy(args: CallArgs) -> list[str]:
    match = _COPY.fullmatch(args.call.callee.name)
    assert match is not None
    kind = "cudaMemcpyHostToDevice" if match.group(1) == "htod" else "cudaMemcpyDeviceToHost"
    out = []
    for name in ("dst", "src"):
        stride = _unit_stride(args, name, -1)
        if stride != "1":
            out.append(f"EXO_ASSUME({stride} == 1);")

    def copy(views: dict[str, View], rows: str, width: str) -> list[str]:
        dst, src = views["dst"], views["src"]
        ctype = dst.ctype
        if rows == "1":
            return [f"EXO_CUDA_CHECK(cudaMemcpyAsync({dst.base}, {src.base}, sizeof({ctype}) * "
                    f"{atom(width)}, {kind}, exo_cudaStream));"]
        return [f"EXO_CUDA_CHECK(cudaMemcpy2DAsync({dst.base}, sizeof({ctype}) * "
                f"{atom(dst.strides[-2])}, {src.base}, sizeof({ctype}) * "
                f"{atom(src.strides[-2])}, sizeof({ctype}) * {atom(width)}, {rows}, {kind}, "
                "exo_cudaStream));"]
    return out + _host_nest(args, int(match.group(2)), ("dst", "src"), copy)


def _host_memset(args: CallArgs) -> list[str]:
    match = _SET.fullmatch(args.call.callee.name)
    assert match is not None
    stride = _unit_stride(args, "dst", -1)
    out = [f"EXO_ASSUME({stride} == 1);"] if stride != "1" else []

    def memset(views: dict[str, View], rows: str, width: str) -> list[str]:
        dst = views["dst"]
        size = f"sizeof({dst.ctype}) * {atom(width)}"
        if rows == "1":
            return [f"EXO_CUDA_CHECK(cudaMemsetAsync({dst.base}, 0, {size}, exo_cudaStream));"]
        return [f"EXO_CUDA_CHECK(cudaMemset2DAsync({dst.base}, sizeof({dst.ctype}) * "
                f"{atom(dst.strides[-2])}, 0, {size}, {rows}, exo_cudaStream));"]
    return out + _host_nest(args, int(match.group(1)), ("dst",), memset)


# ---------------------------------------------------------------- device rows


def _cp_async(args: CallArgs) -> list[str]:
    """`cp.async.cg` for 16 bytes, `.ca` for 4 and 8 bytes. Rules: LANG-8.7"""
    size = args.kwargs["size"]
    nbytes = 4 * size
    if size > 1:
        for name in ("smem", "gmem"):
            stride = _unit_stride(args, name, 0)
            if stride != "1":
                raise RejectedInput(f"Sm80_cp_async_f32: {name} stride {stride} is not known to "
                                    "be 1", args.call.loc, code="ERR-L06", rule="LANG-8.7")
    cache = "cg" if nbytes == 16 else "ca"
    dst, src = args.tensors["smem"].base, args.tensors["gmem"].base
    if args.tensors["smem"].scalar:
        dst = f"&{dst}"
    if args.tensors["gmem"].scalar:
        src = f"&{src}"
    return [f'asm volatile("cp.async.{cache}.shared.global [%0], [%1], {nbytes};" :: '
            f'"r"(static_cast<unsigned>(__cvta_generic_to_shared({dst}))), "l"({src}) : '
            '"memory");']


def _strides2(view: View, transposed: bool) -> tuple[str, str]:
    if len(view.strides) != 2:
        raise InternalError(f"expected a 2-D window, got strides {view.strides}")
    rows, cols = view.strides
    return (cols, rows) if transposed else (rows, cols)


def _mma_load(operand: str, col_major: bool) -> Callable[[CallArgs], list[str]]:
    def lower(args: CallArgs) -> list[str]:
        rows, cols = _strides2(args.tensors["src"], col_major)
        return [f"exo_Sm80_load_{operand}_tf32({args.tensors['rmem'].base}, "
                f"{args.tensors['src'].base}, {rows}, {cols}, {args.kwargs['K']});"]
    return lower


def _mma_store(mode: int, col_major: bool) -> Callable[[CallArgs], list[str]]:
    def lower(args: CallArgs) -> list[str]:
        rows, cols = _strides2(args.tensors["dst"], col_major)
        return [f"exo_Sm80_store_d_tf32<{mode}>({args.tensors['dst'].base}, "
                f"{args.tensors['rmem'].base}, {rows}, {cols});"]
    return lower


def _mma(args: CallArgs) -> list[str]:
    t = args.tensors
    return [f"exo_Sm80_mma_tf32_k{args.kwargs['K']}({t['D'].base}, {t['A'].base}, "
            f"{t['B'].base});"]


def _mma_zero(args: CallArgs) -> list[str]:
    return [f"exo_Sm80_zero_d_tf32({args.tensors['rmem'].base});"]


def _mma_m16n8_zero(args: CallArgs) -> list[str]:
    """Endgame's generic zeroing (specs/dialects.md): its f32 form is the tf32 fragment's."""
    given = {**dict(getattr(args.call.callee, "bound", ())), **dict(args.call.kwargs)}
    if given.get("D") != "f32":
        raise Unsupported(f"no CUDA lowering for Sm80_mma_m16n8_zero with D={given.get('D')} "
                          "(only f32)", args.call.loc, code="ERR-L06", rule="LANG-8.7")
    return [f"exo_Sm80_zero_d_tf32({args.tensors['D'].base});"]


Lowering = Callable[[CallArgs], list[str]]


def _shuffle(add: bool, src: str = "inputs", dst: str = "outputs") -> Lowering:
    """`cuda_shfl_xor_sync_1f32[_sum]` (endgame's `cuda_shfl_xor_sync[_sum]_1d`, operands
    `src`/`dst` of any precision, CG-I1): each thread of a lane pair `laneMask` apart holds
    its own `inputs`/`outputs` register (the distributed dimension is dropped, COLL-5.8); the
    member mask names just the pair, as upstream's `cuda_warp_intrin` lowering does. The sum
    is own + other, the behaviour's `inputs[0] + inputs[1]` (IEEE addition commutes)."""
    def lower(args: CallArgs) -> list[str]:
        lane = args.kwargs["laneMask"]
        inp, out = args.tensors[src], args.tensors[dst]
        if not (inp.scalar and out.scalar):
            raise InternalError(f"{args.call.callee}: shuffle operands are not one register "
                                "per thread", args.call.loc)
        mask = f"(({1 << lane | 1}u) << (threadIdx.x & {31 & ~lane}u))"
        value = f"__shfl_xor_sync({mask}, {inp.base}, {lane})"
        return [f"{out.base} = {inp.base} + {value};" if add else f"{out.base} = {value};"]
    return lower


def _packed_copy(args: CallArgs) -> list[str]:
    """`cuda_packed32_{load,store}` (and its `cuda_packed_{load,store}_<t>` partials) and the
    vector forms `cuda_packed32_{load,store}v_{16,32}b`: one thread copies the `pack` (`v` x
    32 / bits) elements of `src` into `dst`, element by element. The verified
    effect is exactly that (reads of src, writes of dst, one thread, in order); a single
    32-bit access would also need a 4-byte-aligned window, which the proof does not show.
    Rules: CG-I2, LANG-8.7"""
    callee = args.call.callee
    given = {**dict(getattr(callee, "bound", ())), **dict(args.call.kwargs)}
    dst, src = args.tensors["dst"], args.tensors["src"]
    match = _VECTOR.fullmatch(callee.name)
    per = 32 // int(match[1]) if match else 1
    # `_v{v}`: v registers of 32 // bits elements, `[v, per]` on the register side
    pack = given["v"] * per if match else given["pack"]

    def at(view: View, k: int) -> str:
        if view.scalar:
            return view.element([], args.call.loc)
        idx = [str(k // per), str(k % per)] if len(view.strides) == 2 else [str(k)]
        return view.element(["0"] * view.drop + idx, args.call.loc)
    return [f"{at(dst, k)} = {at(src, k)};" for k in range(pack)]


_VECTOR = re.compile(r"cuda_packed32_(?:load|store)v_(16|32)b")


def _view_row(row: WgmmaLowering) -> Lowering:
    """A wgmma or Sm100 row reads the call, the operand views and the C sizes."""
    return lambda args: row(args.call, args.tensors, args.sizes)


def _tk_row(row: tk.Row) -> Lowering:
    """A ThunderKittens row reads the windows, C arguments and every keyword (precisions)."""
    def lower(args: CallArgs) -> list[str]:
        callee = args.call.callee
        assert isinstance(callee, Instr)
        keywords = {k: getattr(v, "name", v) for k, v in (*callee.bound, *args.call.kwargs)}
        try:
            return row(tk.TkCall(args.tensors, args.sizes, keywords))
        except SporkError as err:  # a row's refusal is located at the call
            if err.loc is None or err.loc.line == 0:
                err.loc = args.call.loc
            raise
    return lower


def _device_rows() -> dict[str, Lowering]:
    rows: dict[str, Lowering] = {"Sm80_cp_async_f32": _cp_async, "Sm80_mma_tf32": _mma,
                                 "Sm80_mma_zero_d_tf32": _mma_zero,
                                 "cuda_shfl_xor_sync_1f32": _shuffle(False),
                                 "cuda_shfl_xor_sync_1f32_sum": _shuffle(True),
                                 "cuda_shfl_xor_sync_1d": _shuffle(False, "src", "dst"),
                                 "cuda_shfl_xor_sync_sum_1d": _shuffle(True, "src", "dst"),
                                 "cuda_packed32_load": _packed_copy,
                                 "cuda_packed32_store": _packed_copy,
                                 **{f"cuda_packed32_{op}v_{b}b": _packed_copy
                                    for op in ("load", "store") for b in (16, 32)},
                                 "Sm80_mma_m16n8_zero": _mma_m16n8_zero}
    rows.update({name: _view_row(row) for name, row in WGMMA_ROWS.items()})
    rows.update({name: _view_row(row) for name, row in sm100_rows.SM100_ROWS.items()})
    rows.update({name: _tk_row(row) for name, row in tk.TK_ROWS.items()})
    rows.update({name: _tk_row(row) for name, row in tk_wgmma.TK_WGMMA_ROWS.items()})
    for major in ("row", "col"):
        col = major == "col"
        rows[f"Sm80_mma_load_a_{major}_major_tf32"] = _mma_load("a", col)
        rows[f"Sm80_mma_load_b_{major}_major_tf32"] = _mma_load("b", col)
        for mode, verb in enumerate(("store", "reduce", "atomic_reduce")):
            rows[f"Sm80_mma_{verb}_d_{major}_major_tf32"] = _mma_store(mode, col)
    return rows


HOST_LOWERINGS: Mapping[str, Lowering] = MappingProxyType(
    {name: (_host_copy if name.startswith("cudaMemcpyAsync") else _host_memset)
     for name in INSTRS if _COPY.fullmatch(name) or _SET.fullmatch(name)})
DEVICE_LOWERINGS: Mapping[str, Lowering] = MappingProxyType(_device_rows())


def _lower(table: Mapping[str, Lowering], s: ir.Call, env: Env) -> list[str]:
    callee = s.callee
    if not isinstance(callee, Instr):
        raise Unsupported(f"codegen of a call of proc {getattr(callee, 'name', callee)}", s.loc,
                          code="ERR-V11", rule="LANG-8.7")
    row = table.get(callee.name)
    if row is None:
        raise Unsupported(f"no CUDA lowering for instruction {callee.name} here", s.loc,
                          code="ERR-L06", rule="LANG-8.7")
    return row(_evaluate(s, env))


def lower_host_call(s: ir.Call, env: Env) -> list[str]:
    """A stream-ordered host instruction at CPU scope. Rules: LANG-6.5, LANG-8.7"""
    return _lower(HOST_LOWERINGS, s, env)


def lower_device_call(s: ir.Call, env: Env) -> list[str]:
    """An instruction in CUDA scope; the collective unit was checked by the static stage, so
    every thread of the calling collective runs the same lines (the Sm80 rows address
    fragments by lane, threadIdx.x % 32). Rules: LANG-8.7"""
    return _lower(DEVICE_LOWERINGS, s, env)


_SM80_FRAGMENTS = r"""
#ifndef EXO_SM80_TF32_FRAGMENTS
#define EXO_SM80_TF32_FRAGMENTS
// Sm80 tf32 fragments, PTX ISA layouts of mma.m16n8k8 / mma.m16n8k4 (.tf32): lane = 4 * g + t.
__device__ __forceinline__ void exo_Sm80_load_a_tf32(
    float* rmem, const float* src, int64_t rs, int64_t cs, int K)
{
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    rmem[0] = src[g * rs + t * cs];
    rmem[1] = src[(g + 8) * rs + t * cs];
    if (K == 8) {
        rmem[2] = src[g * rs + (t + 4) * cs];
        rmem[3] = src[(g + 8) * rs + (t + 4) * cs];
    }
}

__device__ __forceinline__ void exo_Sm80_load_b_tf32(
    float* rmem, const float* src, int64_t rs, int64_t cs, int K)
{
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    rmem[0] = src[t * rs + g * cs];
    if (K == 8) {
        rmem[1] = src[(t + 4) * rs + g * cs];
    }
}

template <int Mode>  // 0: store, 1: reduce, 2: atomic reduce
__device__ __forceinline__ void exo_Sm80_store_d_tf32(
    float* dst, const float* rmem, int64_t rs, int64_t cs)
{
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; i++) {
        float* p = &dst[(g + 8 * (i / 2)) * rs + (2 * t + i % 2) * cs];
        if constexpr (Mode == 0) {
            *p = rmem[i];
        } else if constexpr (Mode == 1) {
            *p += rmem[i];
        } else {
            atomicAdd(p, rmem[i]);
        }
    }
}

__device__ __forceinline__ void exo_Sm80_zero_d_tf32(float* rmem)
{
    for (int i = 0; i < 4; i++) {
        rmem[i] = 0.0f;
    }
}

__device__ __forceinline__ void exo_Sm80_mma_tf32_k8(
    float* d, const float* a, const float* b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])),
                   "r"(__float_as_uint(a[2])), "r"(__float_as_uint(a[3])),
                   "r"(__float_as_uint(b[0])), "r"(__float_as_uint(b[1])));
}

__device__ __forceinline__ void exo_Sm80_mma_tf32_k4(
    float* d, const float* a, const float* b)
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])),
                   "r"(__float_as_uint(b[0])));
}
#endif
"""


def helpers_for(calls: list[tuple[str, dict[str, int]]]) -> str:
    """Helper functions needed by the device rows of `calls` ((instr name, template
    keywords) of every call; "" if none)."""
    out = ""
    if any(name.startswith("Sm80_mma") for name, _ in calls):
        out += _SM80_FRAGMENTS
    if any(name.startswith("cuda_tk_") for name, _ in calls) or tk_wgmma.used(calls):
        out += tk.HELPERS
    if tk_wgmma.used(calls):
        out += tk_wgmma.HELPERS
    return out + wgmma.helpers(calls) + sm100_rows.helpers(calls)
