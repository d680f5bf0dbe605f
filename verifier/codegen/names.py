"""C identifiers and C types for a proc's names and scalar types.

Reads a proc's binders (arguments, allocations, loop iterators, window names); produces one C
identifier per `Sym`. A display name used by a single Sym is kept as it is; a name shared by
several Syms, a C/C++/CUDA keyword or builtin, or a name in the generated-code namespaces
(`exo_*`, `CudaWarps_*`) gets the Sym id appended, so generated code never captures or shadows a
user's variable. Non-goals: names of `cuda_threads` iterators, which are the guard variables of
COLL-4.3 (chosen by `verifier.collectives`).
"""

from __future__ import annotations

import re
from collections import Counter

from verifier.diagnostics import InternalError, UnhandledNode
from verifier.lang.ir import ir

_RESERVED = frozenset("""
alignas alignof and asm auto bool break case catch char char16_t char32_t class const constexpr
const_cast continue decltype default delete do double dynamic_cast else enum explicit export
extern false float for friend goto if inline int long mutable namespace new noexcept not nullptr
operator or private protected public register reinterpret_cast return short signed sizeof static
static_assert static_cast struct switch template this thread_local throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while xor
threadIdx blockIdx blockDim gridDim warpSize clusterDim main malloc free memcpy memset printf
abs min max sqrt exp log size_t int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t
int_fast32_t dim3 std
""".split())

_CTYPES = {
    "f16": "__half", "bf16": "__nv_bfloat16", "f32": "float", "f64": "double", "i8": "int8_t",
    "ui8": "uint8_t", "ui16": "uint16_t", "i32": "int32_t", "e4m3": "__nv_fp8_e4m3", "R": "float", "exo_f16": "__half",
    "exo_bf16": "__nv_bfloat16", "float": "float", "double": "double", "int8_t": "int8_t",
    "uint8_t": "uint8_t", "uint16_t": "uint16_t", "int32_t": "int32_t",
}

_SIZES = {"__half": 2, "__nv_bfloat16": 2, "float": 4, "double": 8, "int8_t": 1, "uint8_t": 1,
          "uint16_t": 2, "int32_t": 4, "__nv_fp8_e4m3": 1}


def ctype_of(base: str) -> str:
    """The C type of a scalar type name of the DSL (`f32` -> `float`)."""
    try:
        return _CTYPES[base]
    except KeyError:
        raise InternalError(f"no C type for scalar type {base!r}") from None


def ctype_size(ctype: str) -> int:
    """sizeof(ctype) in bytes, for shared-memory layout."""
    return _SIZES[ctype]


def control_ctype(kind: str) -> str:
    """C type of a control value (`size`/`index`/`stride` -> int64_t, `bool` -> bool)."""
    return "bool" if kind == "bool" else "int64_t"


def _binders(stmts: tuple[ir.Stmt, ...], out: list[ir.Sym]) -> None:
    for s in stmts:
        match s:
            case ir.Alloc(name=name):
                out.append(name)
            case ir.WindowStmt(name=name):
                out.append(name)
            case ir.For(iter=it, body=body):
                out.append(it)
                _binders(body, out)
            case ir.If(body=body, orelse=orelse):
                _binders(body, out)
                _binders(orelse, out)
            case ir.DeviceFunction(body=body) | ir.Warps(body=body):
                _binders(body, out)
            case ir.Assign() | ir.Reduce() | ir.Pass() | ir.Call() | ir.Fence() | ir.Arrive() \
                    | ir.Await():
                pass
            case _:
                raise UnhandledNode(s)


class Namer:
    """One C identifier per Sym of a proc (deterministic: ids come from the parse)."""

    def __init__(self, proc: ir.Proc) -> None:
        syms: list[ir.Sym] = [a.name for a in proc.args]
        _binders(proc.body, syms)
        unique = list(dict.fromkeys(syms))
        counts = Counter(s.name for s in unique)
        self._names: dict[ir.Sym, str] = {}
        taken: set[str] = set()
        for sym in unique:
            text = re.sub(r"[^A-Za-z0-9_]", "_", sym.name)
            if counts[sym.name] > 1 or text != sym.name or text in _RESERVED \
                    or text.startswith(("exo_", "CudaWarps_")) or text[:1].isdigit():
                text = f"{text}_{sym.id}"
            while text in taken:
                text += "_"
            taken.add(text)
            self._names[sym] = text

    def __call__(self, sym: ir.Sym) -> str:
        try:
            return self._names[sym]
        except KeyError:
            raise InternalError(f"no binder for {sym.name} (id {sym.id})") from None
