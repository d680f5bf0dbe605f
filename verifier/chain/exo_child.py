"""The exo-lang side of the chain, run in a child interpreter (CHAIN-8): `main()`.

Only this process imports exo-lang (PyPI `exo-lang`, import name `exo`). spork-verify serves its
own `exo.*` names to kernel files while they load (load/upstream_modules.py), in the kernel's
loading child; this child never installs those names, and the verifier's own process never
imports `exo` at all, so the two meanings of `exo` never meet in one interpreter (CHAIN-8.1).

Requests (pickled on stdin; the reply is pickled into the file named by the request, since the
user's reference file owns stdout):
  ("reference", path, proc, erased)   the proc as `ir.Proc` (converted from exo-lang's LoopIR);
                                       exo-lang must also accept `erased` (text, name) if given
  ("compile", [(label, source, name)])  exo-lang accepts each source and compiles it to C
  ("run", kernel_source, kernel_name, ref_path, ref_proc, [sizes...], seed, fill)
                                       both compiled by exo-lang and gcc, run on the same
                                       integer-valued inputs; the outputs come back
"""

from __future__ import annotations

import ctypes
import os
import pickle
import runpy
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

_SCALARS = {"F32": ("f32", ctypes.c_float, "float"), "F64": ("f64", ctypes.c_double, "double"),
            "Num": ("R", ctypes.c_float, "float")}


def _exo() -> Any:
    import exo  # the real exo-lang: this process never serves spork-verify's names

    return exo


def _loc(srcinfo: Any, default_file: str) -> tuple[str, int, int]:
    if srcinfo is None:
        return (default_file, 1, 1)
    return (str(srcinfo.filename or default_file), int(srcinfo.lineno or 1),
            int(srcinfo.col_offset or 0) + 1)


class _Convert:
    """exo-lang LoopIR → spork-verify IR (seq loops, ifs, allocations, assignments)."""

    def __init__(self, path: str) -> None:
        from verifier.diagnostics import SrcLoc
        from verifier.lang.ir import ir

        self.ir, self.SrcLoc, self.path = ir, SrcLoc, path
        self.syms: dict[Any, Any] = {}

    def loc(self, node: Any) -> Any:
        return self.SrcLoc(*_loc(getattr(node, "srcinfo", None), self.path))

    def sym(self, s: Any) -> Any:
        if s not in self.syms:
            self.syms[s] = self.ir.Sym(str(s), len(self.syms) + 1)
        return self.syms[s]

    def typ(self, t: Any) -> Any:
        ir = self.ir
        kind = type(t).__name__
        if kind in ("Size", "Index", "Int", "Bool", "Stride"):
            return ir.Control({"Int": "index"}.get(kind, kind.lower()))
        if kind == "Tensor":
            if t.is_window:
                raise ValueError("window arguments")
            return ir.Tensor(_SCALARS.get(type(t.type).__name__, ("f32",))[0],
                             tuple(self.expr(e) for e in t.hi))
        if kind in _SCALARS:
            return ir.Scalar(_SCALARS[kind][0])
        raise ValueError(f"type {t}")

    def expr(self, e: Any) -> Any:
        ir, loc, kind = self.ir, self.loc(e), type(e).__name__
        if kind == "Const":
            return ir.Const(e.val, loc)
        if kind == "Read":
            if not e.idx and type(e.type).__name__ in ("Size", "Index", "Int", "Bool"):
                return ir.Var(self.sym(e.name), loc)
            return ir.Read(self.sym(e.name), tuple(self.expr(i) for i in e.idx), loc)
        if kind == "USub":
            return ir.USub(self.expr(e.arg), loc)
        if kind == "BinOp":
            return ir.BinOp(str(e.op), self.expr(e.lhs), self.expr(e.rhs), loc)
        raise ValueError(f"{kind} expressions (line {loc.line})")

    def stmt(self, s: Any) -> list[Any]:
        ir, loc, kind = self.ir, self.loc(s), type(s).__name__
        if kind in ("Assign", "Reduce"):
            node = ir.Assign if kind == "Assign" else ir.Reduce
            return [node(self.sym(s.name), tuple(self.expr(i) for i in s.idx),
                         self.expr(s.rhs), loc)]
        if kind == "Pass":
            return [ir.Pass(loc)]
        if kind == "If":
            return [ir.If(self.expr(s.cond), self.block(s.body), self.block(s.orelse), loc)]
        if kind == "For":
            return [ir.For(self.sym(s.iter), self.expr(s.lo), self.expr(s.hi), ir.Seq(),
                           self.block(s.body), loc)]
        if kind == "Alloc":
            from verifier.lang.stdlib.memories import DRAM

            return [ir.Alloc(self.sym(s.name), self.typ(s.type), DRAM, loc)]
        if kind == "Free":
            return []
        raise ValueError(f"{kind} statements (line {loc.line})")

    def block(self, stmts: Any) -> tuple[Any, ...]:
        return tuple(x for s in stmts for x in self.stmt(s))

    def proc(self, p: Any) -> Any:
        from verifier.lang.stdlib.memories import DRAM

        ir = self.ir
        args = tuple(ir.Arg(self.sym(a.name), self.typ(a.type),
                            DRAM if type(a.type).__name__ == "Tensor" else None, self.loc(a))
                     for a in p.args)
        return ir.Proc(str(p.name), args, tuple(self.expr(e) for e in p.preds),
                       self.block(p.body), self.loc(p))


def _find_proc(path: str, name: str) -> Any:
    exo = _exo()
    sys.path.insert(0, str(Path(path).resolve().parent))
    module = runpy.run_path(path, run_name="__spork_reference__")
    found = module.get(name)
    if not isinstance(found, exo.API.Procedure):
        procs = sorted(k for k, v in module.items() if isinstance(v, exo.API.Procedure))
        raise LookupError(f"{path} defines no exo-lang proc named {name!r} (it defines: "
                          f"{', '.join(procs) or 'none'})")
    return found


def reference(path: str, name: str, erased: tuple[str, str] | None = None) -> Any:
    """The reference as IR; with `erased` (module text, proc name), exo-lang's frontend must
    also accept the erased kernel (CHAIN-1.6), else the reply is an error saying so."""
    p = _find_proc(path, name)
    if erased is not None:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                _from_source(erased[0], erased[1], Path(tmp), "erased")
            except Exception as e:  # noqa: BLE001 - exo's own complaint, passed on
                raise ErasedRejected(f"exo-lang rejects the erased kernel: "
                                     f"{type(e).__name__}: {e}") from None
    return _Convert(path).proc(p._loopir_proc)


class ErasedRejected(Exception):
    """exo-lang's frontend refused the erased kernel (not the user's reference)."""


def _from_source(source: str, name: str, folder: Path, label: str) -> Any:
    file = folder / f"{label}.py"
    file.write_text(source)
    return runpy.run_path(str(file))[name]


def compile_sources(items: list[tuple[str, str, str]]) -> dict[str, str]:
    """Each (label, module text, proc name): exo-lang's (C source, C header) for it, written
    for `#include "<label>.h"` (exo errors propagate)."""
    exo = _exo()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, source, name in items:
            p = _from_source(source, name, Path(tmp), label)
            out[label] = exo.compile_procs_to_strings([p], f"{label}.h")
    return out


def _wrapper(p: Any, symbol: str) -> str:
    """A C entry `spork_entry(int64_t *sizes, void **bufs)` calling exo's function."""
    args, ns, nb = [], 0, 0
    for a in p.args:
        kind = type(a.type).__name__
        if kind in ("Size", "Index", "Int"):
            args.append(f"sizes[{ns}]")
            ns += 1
        elif kind == "Tensor" or kind in _SCALARS:  # a scalar is passed by pointer
            elem = a.type.type if kind == "Tensor" else a.type
            ctype = _SCALARS[type(elem).__name__][2]
            args.append(f"({ctype}*)bufs[{nb}]")
            nb += 1
        else:
            raise ValueError(f"argument {a.name} of type {a.type}")
    return (f"\n#include <stdint.h>\nvoid spork_entry(int64_t *sizes, void **bufs) "
            f"{{ {symbol}(NULL{''.join(', ' + x for x in args)}); }}\n")


def _is_data(a: Any) -> bool:
    """A tensor or scalar argument (both passed to exo's C function as pointers)."""
    return type(a.type).__name__ in ("Tensor", *_SCALARS)


def _build(p: Any, folder: Path, label: str) -> Any:
    exo = _exo()
    c_text, h_text = exo.compile_procs_to_strings([p], f"{label}.h")
    (folder / f"{label}.h").write_text(h_text)
    (folder / f"{label}.c").write_text(c_text + _wrapper(p._loopir_proc, str(p.name())))
    lib = folder / f"lib{label}.so"
    subprocess.run(["gcc", "-O1", "-std=gnu11", "-fPIC", "-shared", "-o", str(lib),
                    str(folder / f"{label}.c"), "-lm"], check=True, capture_output=True,
                   text=True)
    return ctypes.CDLL(str(lib))


def _eval_shape(e: Any, sizes: dict[str, int]) -> int:
    kind = type(e).__name__
    if kind == "Const":
        return int(e.val)
    if kind == "Read":
        return sizes[str(e.name)]
    if kind == "BinOp":
        a, b = _eval_shape(e.lhs, sizes), _eval_shape(e.rhs, sizes)
        return {"+": a + b, "-": a - b, "*": a * b, "/": a // b, "%": a % b}[str(e.op)]
    raise ValueError(f"shape expression {e}")


def _call(lib: Any, p: Any, sizes: dict[str, int], arrays: dict[str, Any]) -> None:
    import numpy as np

    svals = [sizes[str(a.name)] for a in p.args
             if type(a.type).__name__ in ("Size", "Index", "Int")]
    bufs = [arrays[str(a.name)] for a in p.args if _is_data(a)]
    size_arr = (ctypes.c_int64 * max(1, len(svals)))(*svals)
    ptrs = (ctypes.c_void_p * max(1, len(bufs)))(
        *[b.ctypes.data_as(ctypes.c_void_p) for b in bufs])
    assert all(isinstance(b, np.ndarray) and b.flags.c_contiguous for b in bufs)
    lib.spork_entry(size_arr, ptrs)


def run(kernel_source: str, kernel_name: str, ref_path: str, ref_name: str,
        sizes_list: list[dict[str, int]], seed: int, low: int, high: int) -> list[dict]:
    """Both procs at each sizes on the same inputs (integers in [low, high] stored as the
    element type, so sums of products are exact): every tensor argument after each run."""
    import numpy as np

    ref = _find_proc(ref_path, ref_name)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        kern = _from_source(kernel_source, kernel_name, folder, "erased")
        libs = {"kernel": (_build(kern, folder, "kernel"), kern),
                "reference": (_build(ref, folder, "reference"), ref)}
        rng = np.random.default_rng(seed)
        for sizes in sizes_list:
            inputs: dict[str, Any] = {}
            for a in ref._loopir_proc.args:
                if _is_data(a):
                    tensor = type(a.type).__name__ == "Tensor"
                    shape = [_eval_shape(e, sizes) for e in a.type.hi] if tensor else [1]
                    elem = a.type.type if tensor else a.type
                    dtype = np.float64 if type(elem).__name__ == "F64" else np.float32
                    inputs[str(a.name)] = rng.integers(low, high + 1, size=shape).astype(dtype)
            result: dict[str, Any] = {"sizes": sizes}
            for side, (lib, p) in libs.items():
                arrays = {k: v.copy() for k, v in inputs.items()}
                _call(lib, p._loopir_proc, sizes, arrays)
                result[side] = arrays
            out.append(result)
    return out


def main() -> None:
    request = pickle.load(sys.stdin.buffer)
    reply_path, what, args = request[0], request[1], request[2:]
    try:
        if what == "reference":
            reply: Any = ("ok", reference(*args))
        elif what == "compile":
            reply = ("ok", compile_sources(*args))
        elif what == "run":
            reply = ("ok", run(*args))
        else:
            reply = ("error", f"unknown request {what}", None)
    except BaseException as e:  # noqa: BLE001 - everything becomes a located reply
        tb = traceback.extract_tb(e.__traceback__)
        user = [f for f in tb if not f.filename.startswith((os.path.dirname(__file__),
                                                            sys.prefix, sys.base_prefix))]
        where = (user[-1].filename, user[-1].lineno) if user else None
        detail = getattr(e, "stderr", "") or ""
        reply = ("error", f"{type(e).__name__}: {e}{(' ' + detail[-2000:]) if detail else ''}",
                 where)
        if isinstance(e, ErasedRejected):
            reply = ("erased-rejected", str(e), None)
    with open(reply_path, "wb") as f:
        pickle.dump(reply, f)


if __name__ == "__main__":
    main()
