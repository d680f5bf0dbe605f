"""The static error catalog (language.md §9, collectives.md error table), stages P and O: each
error has a program that triggers it, and the report carries its code, a message keyword and
the right `file:line:col`. Stage A and L codes are in test_error_catalog_analysis.py and
test_error_catalog_barriers.py; `test_every_catalog_code_is_tested` ties the three together."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from catalog_support import Case, check_case

from conftest import ROOT

T = "            "  # statement indent inside the default kernel
LOOP = [T + "for t in cuda_threads(0, 256):"]
CG = [T + "cg: barrier[256] @ CudaCommitGroup", *LOOP]
HELPER = ["", "", "@proc", "def h(m: size):", "    pass"]

CASES = [
    # -- P: parse / typecheck (language.md §9.1)
    Case("ERR-P00", "Python syntax error", [T + "y[task, 0] = = 1.0  #!"], at="= 1.0"),
    Case("ERR-P01", "Only >> BinOp supported at top level", [T + "x[task, 0] + 1.0  #!"]),
    Case("ERR-P02", "Only SyncStmt and Call can take >> trailing barrier exprs",
         [T + "x >> y  #!"]),
    Case("ERR-P03", "Fence cannot take >> trailing barrier exprs",
         [T + "Fence(cuda_in_order, cuda_in_order) >> y  #!"]),
    Case("ERR-P03", "Await cannot take >> trailing barrier exprs",
         [*CG, T + "    Await(cg[t], cuda_in_order, 0) >> cg[t]  #!"]),
    Case("ERR-P04", "cannot have more than 1 trailing barrier expr",
         [T + "Sm80_cp_async_f32(x[task, 0:4], x[task, 4:8], size=4) >> y >> y  #!"],
         at="Sm80"),
    Case("ERR-P05", "unknown data variable", [T + "y[task, 0] = z[task, 0]  #!"], at="z["),
    Case("ERR-P05", "expected called object", [T + "frobnicate(x)  #!"]),
    Case("ERR-P06", "Cannot take keyword arguments", [T + "h(n, m=1)  #!"], prelude=HELPER),
    Case("ERR-P07", "Failed to instantiate",
         [T + "Sm80_cp_async_f32(x[task, 0:3], x[task, 0:3], size=3)  #!"]),
    Case("ERR-P07", "Failed to instantiate Sm90_tensorMap",
         ["    tm = x[:, :] @ Sm90_tensorMap(16, 8, 8)  #!"], kernel=False, at="Sm90"),
    Case("ERR-P08", "expected only 1 withitem",
         [T + "with CudaWarps(0, 1), CudaWarps(1, 2):  #!", T + "    pass"]),
    Case("ERR-P09", "Unsupported context type for with", [T + "with 3:  #!", T + "    pass"],
         at="3"),
    Case("ERR-P10", "unknown loop mode", [T + "for t in sideways(0, 4):  #!", T + "    pass"],
         at="sideways"),
    Case("ERR-P10", "exactly 2 positional", [T + "for t in seq(0, 4, 1):  #!", T + "    pass"],
         at="seq"),
    Case("ERR-P10", "failed to construct loop mode",
         [T + "for t in cuda_threads(0, 4, unroll=2):  #!", T + "    pass"], at="2)"),
    Case("ERR-P11", "needs to be subclass of Memory or SpecialWindow", ["    pass"],
         kernel=False, sig="n: size, z: f32[n] @ CudaMbarrier", sig_mark=True,
         at="CudaMbarrier"),
    Case("ERR-P12", "maybe cuda_in_order", [T + "Fence(cuda_in_order_instr, cuda_in_order)  #!"],
         at="cuda_in_order_instr"),
    Case("ERR-P13", "Unknown keyword 'scope' for Fence()",
         [T + "Fence(cuda_in_order, cuda_in_order, scope=1)  #!"]),
    Case("ERR-P14", "Fence expects 2 arguments", [T + "Fence(cuda_in_order)  #!"]),
    Case("ERR-P14", "Await expects 3 arguments", [*CG, T + "    Await(cg[t], cuda_in_order)  #!"]),
    Case("ERR-P15", "Expect N=1", [*CG, T + "    Arrive(Sm80_cp_async, 2) >> cg[t]  #!"],
         at="2)"),
    Case("ERR-P16", "Await N=1.5; expected int",
         [*CG, T + "    Await(cg[t], cuda_in_order, 1.5)  #!"], at="1.5"),
    Case("ERR-P17", "expected window-like expression for barrier",
         [*CG, T + "    Arrive(Sm80_cp_async) >> -cg[t]  #!"], at="-cg"),
    Case("ERR-P18", "takes exactly 1 parameter",
         [T + "b: barrier(x, y) @ CudaMbarrier  #!"], at="barrier("),
    Case("ERR-P19", "expected @X annotation to subclass BarrierMechanism/Memory",
         [T + "s: f32[4] @ cuda_thread  #!"], at="cuda_thread"),
    Case("ERR-P20", "beginning of a function", [T + "pass", "    assert n > 0  #!"]),
    Case("ERR-P21", "got 1 arguments but need 2",
         [T + "Sm80_cp_async_f32(x[task, 0:4], size=4)  #!"]),
    Case("ERR-P22", "BarrierExpr requires barrier type, not x",
         [T + "Await(x, cuda_in_order, 0)  #!"], at="x,"),
    Case("ERR-P22", "expected 1 indices for BarrierExpr",
         [*CG, T + "    Arrive(Sm80_cp_async) >> cg  #!"], at="cg  #!"),
    Case("ERR-P23", "must not reference itself", [T + "a: barrier(a) @ CudaMbarrier  #!"],
         at="a) @"),
    Case("ERR-P23", "must name a barrier", [T + "a: barrier(x) @ CudaMbarrier  #!"],
         at="x) @"),
    Case("ERR-P24", "Can only create SpecialWindow as part of WindowStmt",
         [T + "y[task, 0] = x[task, 0] @ Sm90_tensorMap(0, 8)  #!"], at="x[task, 0] @"),
    Case("ERR-P24", "from a dense tensor, not another window",
         ["    w = x[0:8, :]", "    tm = w[:, :] @ Sm90_tensorMap(0, 8, 8)  #!"], kernel=False,
         at="w[:, :]"),
    Case("ERR-P25", "unsupported binary operator", [T + "y[task, 0] = x[task, 2 // 1]  #!"],
         at="2 // 1"),
    Case("ERR-P26", "control type size cannot have @", ["    pass"], kernel=False,
         sig="n: size @ DRAM", sig_mark=True, at="n: size"),
    Case("ERR-P26", "barrier argument not allowed", ["    pass"], kernel=False,
         sig="b: barrier", sig_mark=True, at="b: barrier"),
    Case("ERR-P29", "Could not verify assertion stride(w, 0) == 1 in h3",
         ["    z: f32[4, 2] @ DRAM", "    h3(z[:, 0])  #!"], kernel=False,
         prelude=["", "", "@proc", "def h3(w: [f32][4]):", "    assert stride(w, 0) == 1",
                  "    pass"]),
    Case("ERR-P28", "not part of the spork26 dialect",
         [T + "with CudaAsync(Sm80_cp_async_instr):  #!", T + "    pass"], at="CudaAsync"),
    # -- O: configuration objects (language.md §9.2)
    Case("ERR-O01", "multiple of 32",
         ["    with CudaDeviceFunction(blockDim=100):  #!", "        for task in cuda_tasks(0, n):",
          "            pass"], kernel=False, at="CudaDeviceFunction"),
    Case("ERR-O02", "not a power of 2",
         ["    with CudaDeviceFunction(blockDim=128, clusterDim=3):  #!",
          "        for task in cuda_tasks(0, n):", "            pass"], kernel=False,
         at="CudaDeviceFunction"),
    Case("ERR-O03", "exactly one of blockDim or warp_config",
         ["    with CudaDeviceFunction(clusterDim=1):  #!", "        for task in cuda_tasks(0, n):",
          "            pass"], kernel=False, at="CudaDeviceFunction"),
    Case("ERR-O04", "blocks_per_sm",
         ["    with CudaDeviceFunction(blockDim=128, blocks_per_sm=0):  #!",
          "        for task in cuda_tasks(0, n):", "            pass"], kernel=False,
         at="CudaDeviceFunction"),
    Case("ERR-O05", "CudaDeviceFunction.warp_config:",
         ["    with CudaDeviceFunction(warp_config=[CudaWarpConfig('a', 1), "
          "CudaWarpConfig('a', 1)]):  #!", "        for task in cuda_tasks(0, n):",
          "            pass"], kernel=False, at="CudaDeviceFunction"),
    Case("ERR-O06", "CudaWarpConfig",
         ["    with CudaDeviceFunction(warp_config=[CudaWarpConfig('a', 0)]):  #!",
          "        for task in cuda_tasks(0, n):", "            pass"], kernel=False,
         at="CudaDeviceFunction"),
    Case("ERR-O07", "CudaWarps", [T + "with CudaWarps(3, 1):  #!", T + "    pass"],
         at="CudaWarps"),
    Case("ERR-O08", "scaled by positive int",
         [T + "for t in cuda_threads(0, 4, unit=0 * cuda_thread):  #!", T + "    pass"],
         at="0 * cuda_thread"),
    Case("ERR-O08", "cannot be scaled",
         [T + "for t in cuda_threads(0, 4, unit=2 * CollUnit((8,), (1,))):  #!", T + "    pass"],
         at="2 * CollUnit"),
    Case("ERR-O09", "ill-formed CollUnit",
         [T + "for t in cuda_threads(0, 1, unit=CollUnit((8,), (16,))):  #!", T + "    pass"]),
]


@pytest.mark.rule("LANG-1.2")
@pytest.mark.rule("LANG-3.6")
@pytest.mark.rule("LANG-5.1")
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_parse_and_config_errors_report_code_keyword_and_location(tmp_path: Path,
                                                                  case: Case) -> None:
    check_case(tmp_path, case)


REFERENCE = ROOT.parent / "shared" / "reference"
STATIC_CODE = re.compile(r"ERR-[POAL]\d\d")


def catalog_codes() -> set[str]:
    """Every static code of language.md §9.1-9.4 and of collectives.md's error table."""
    codes: set[str] = set()
    for name in ("language.md", "collectives.md"):
        text = (REFERENCE / name).read_text()
        if name == "language.md":
            text = text[text.index("## 9. Static and verification error catalog"):]
            text = text[:text.index("### 9.5")]
        codes |= {m for line in text.splitlines() if line.startswith("|")
                  for m in STATIC_CODE.findall(line)}
    return codes


@pytest.mark.skipif(not REFERENCE.exists(), reason="reference documents not present")
def test_every_catalog_code_is_tested() -> None:
    """Issue 3 "Must show": every static error of the catalog has a located test."""
    from test_error_catalog_analysis import CASES as ANALYSIS_CASES
    from test_error_catalog_analysis import LOW_LEVEL
    from test_error_catalog_barriers import CASES as BARRIER_CASES

    tested = {c.code for c in CASES + ANALYSIS_CASES + BARRIER_CASES} | LOW_LEVEL
    missing = catalog_codes() - tested
    assert not missing, sorted(missing)
    assert len(catalog_codes()) >= 70
