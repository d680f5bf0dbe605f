"""The static error catalog (language.md §9): each error has a program that triggers it, and
the report carries its code, a message keyword and the right `file:line`."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.encode import verify_proc
from verifier.lang import ir
from verifier.lang.load import load_procs
from verifier.lang.procs import ProcError

HEAD = """from verifier.lang import *


@proc
def k(n: size, x: f32[n, 256] @ CudaGmemLinear, y: f32[n, 256] @ CudaGmemLinear):
"""
KERNEL = """    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, n):
"""
# (code, keyword, body lines (the marked line `#!` is where the error must be reported), kernel?)
CASES = [
    ("ERR-P05", "unknown data variable", ["            y[task, 0] = z[task, 0]  #!"], True),
    ("ERR-P10", "unknown loop mode", ["            for t in sideways(0, 4):  #!",
                                      "                pass"], True),
    ("ERR-P10", "exactly 2 positional", ["            for t in seq(0, 4, 1):  #!",
                                         "                pass"], True),
    ("ERR-P12", "maybe cuda_in_order", ["            Fence(cuda_in_order_instr, cuda_in_order)  #!"],
     True),
    ("ERR-P14", "Fence expects 2 arguments", ["            Fence(cuda_in_order)  #!"], True),
    ("ERR-P20", "beginning of a function", ["            pass", "    assert n > 0  #!"], True),
    ("ERR-P25", "unsupported binary operator", ["            y[task, 0] = x[task, 2 // 1]  #!"],
     True),
    ("ERR-P28", "not part of the spork26 dialect", ["            with CudaAsync(Sm80_cp_async_instr):  #!",
                                                      "                pass"], True),
    ("ERR-O01", "multiple of 32", ["    with CudaDeviceFunction(blockDim=100):  #!",
                                   "        for task in cuda_tasks(0, n):",
                                   "            pass"], False),
    ("ERR-O02", "not a power of 2", ["    with CudaDeviceFunction(blockDim=128, clusterDim=3):  #!",
                                     "        for task in cuda_tasks(0, n):",
                                     "            pass"], False),
    ("ERR-O03", "exactly one of blockDim or warp_config",
     ["    with CudaDeviceFunction(clusterDim=1):  #!", "        for task in cuda_tasks(0, n):",
      "            pass"], False),
    ("ERR-O07", "CudaWarps", ["            with CudaWarps(3, 1):  #!", "                pass"], True),
    ("ERR-A11", "Fence not allowed", ["    Fence(cuda_in_order, cuda_in_order)  #!"], False),
    ("ERR-A13", "not a cuda_tasks loop", ["    with CudaDeviceFunction(blockDim=128):",
                                          "        for t in seq(0, n):  #!",
                                          "            pass"], False),
    ("ERR-A14", "outside CUDA device function", ["    for t in cuda_threads(0, 4):  #!",
                                                 "        pass"], False),
    ("ERR-A18", "one thread only", ["            for w in cuda_threads(0, 8, unit=cuda_warp):",
                                    "                y[task, w] = 1.0  #!"], True),
    ("ERR-A20", "expected 0 for lo", ["            for t in cuda_threads(1, 4):  #!",
                                      "                pass"], True),
    ("ERR-A20", "expected literal int value", ["            for t in cuda_threads(0, n):  #!",
                                               "                pass"], True),
    ("ERR-A21", "not enough threads", ["            for t in cuda_threads(0, 300):  #!",
                                       "                pass"], True),
    ("ERR-A22", "cannot change warp name", ["            with CudaWarps(name='x'):  #!",
                                            "                pass"], True),
    ("ERR-A23", "Distributed memory deduction", [
        "            acc: f32[256] @ CudaRmem  #!",
        "            for t in cuda_threads(0, 256):",
        "                acc[255 - t] = x[task, t]"], True),
    ("ERR-A02", "cannot be allocated", ["            s: f32[4] @ DRAM  #!",
                                   "            pass"], True),
    ("ERR-L02", "matched no known case", ["            with CudaWarps(1, 3):",
                                          "                Fence(cuda_in_order, cuda_in_order)  #!"],
     True),
    ("ERR-L02", "not supported", ["            Fence(wgmma_async, cuda_in_order)  #!"], True),
    ("ERR-A27", "missing", ["            cg: barrier[256] @ CudaCommitGroup  #!",
                            "            for t in cuda_threads(0, 256):",
                            "                Arrive(Sm80_cp_async, 1) >> cg[t]"], True),
    ("ERR-A29", "requires N >= 0", ["            cg: barrier[256] @ CudaCommitGroup",
                                    "            for t in cuda_threads(0, 256):",
                                    "                Arrive(Sm80_cp_async, 1) >> cg[t]",
                                    "                Await(cg[t], cuda_in_order, ~0)  #!"], True),
    ("ERR-A29", "requires N < 0", ["            b: barrier @ CudaMbarrier",
                                   "            Arrive(cuda_in_order) >> b",
                                   "            Await(b, cuda_in_order, 0)  #!"], True),
    ("ERR-P15", "Expect N=1", ["            cg: barrier[256] @ CudaCommitGroup",
                               "            for t in cuda_threads(0, 256):",
                               "                Arrive(Sm80_cp_async, 2) >> cg[t]  #!"], True),
    ("ERR-A31", "supports_guards=False", ["            a: barrier[256] @ CudaCommitGroup",
                                          "            b: barrier(a)[256] @ CudaCommitGroup  #!"],
     True),
    ("ERR-A32", "expect Await(b, ...) before", [
        "            a: barrier @ CudaMbarrier",
        "            b: barrier(a) @ CudaMbarrier",
        "            Arrive(cuda_in_order) >> a  #!",
        "            Await(b, cuda_in_order, ~1)",
        "            Arrive(cuda_in_order) >> b",
        "            Await(a, cuda_in_order, ~0)"], True),
    ("ERR-A17", "another such live barrier", [
        "            cg: barrier[256] @ CudaCommitGroup",
        "            cg2: barrier[256] @ CudaCommitGroup  #!"], True),
    ("ERR-L03", "expects collective unit cuda_thread", [
        "            cg: barrier @ CudaCommitGroup",
        "            Arrive(Sm80_cp_async, 1) >> cg  #!",
        "            Await(cg, cuda_in_order, 0)"], True),
]


def _source(body: list[str], kernel: bool) -> tuple[str, int]:
    text = HEAD + (KERNEL if kernel else "") + "\n".join(body) + "\n"
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "#!" in s)
    return text, line


@pytest.mark.parametrize("code,keyword,body,kernel", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_error_is_reported_with_code_keyword_and_line(tmp_path: Path, code: str, keyword: str,
                                                      body: list[str], kernel: bool) -> None:
    text, line = _source(body, kernel)
    path = tmp_path / "prog.py"
    path.write_text(text)
    (p,) = load_procs(path)
    if isinstance(p, ProcError):
        err = p.error
        got_code, message, loc = err.code, err.message, err.loc
    else:
        assert isinstance(p, ir.Proc)
        result = verify_proc(p)
        assert result.verdict.value == "rejected", (result.verdict, result.findings)
        finding = result.findings[0]
        got_code, message, loc = finding.code, finding.message, finding.loc
    assert got_code == code, message
    assert keyword in message, message
    assert loc.file == str(path) and loc.line == line, (loc, message)


def test_error_catalog_covers_many_codes() -> None:
    assert len({c[0] for c in CASES}) >= 25
