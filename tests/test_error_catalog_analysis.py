"""The error catalog, stages A and L without barrier variables (language.md §9.3-9.4,
collectives.md error table): code, message keyword and `file:line:col` of each error. Codes that
no program can reach through the frontend are tested at the lowest API that raises them
(`LOW_LEVEL`); barrier codes are in test_error_catalog_barriers.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_support import Case, check_case

from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.lang.stdlib.timelines import InstrTL
from verifier.semantics import rules

T = "            "
LOOP = [T + "for t in cuda_threads(0, 256):"]
WARPS = [T + "for w in cuda_threads(0, 8, unit=cuda_warp):"]
GRID_WINDOW = ["    g: f32[4] @ CudaGridConstant", "    for i in seq(0, 4):", "        g[i] = 1.0",
               "    w = g[0:2]", "    with CudaDeviceFunction(blockDim=256):",
               "        for task in cuda_tasks(0, n):", *LOOP]
WG = "for wg in cuda_threads(0, 2, unit=cuda_warpgroup):"

CASES = [
    Case("ERR-A01", "does not allow reads in a scope using cuda_basic_device",
         ["    d: f32[256] @ DRAM", "    with CudaDeviceFunction(blockDim=256):",
          "        for task in cuda_tasks(0, n):", *LOOP, T + "    y[task, t] = d[t]  #!"],
         kernel=False, at="d[t]"),
    Case("ERR-A01", "does not allow mutable access",
         ["    g: f32[4] @ CudaGridConstant", "    with CudaDeviceFunction(blockDim=256):",
          "        for task in cuda_tasks(0, n):", T + "for t in cuda_threads(0, 4):",
          T + "    g[t] = 1.0  #!"], kernel=False),
    Case("ERR-A02", "cannot be allocated", [T + "s: f32[4] @ DRAM  #!", T + "pass"]),
    Case("ERR-A03", "cannot be constructed in a scope using cuda_basic_device",
         [T + "tm = x[0:8, 0:8] @ Sm90_tensorMap(0, 8, 8)  #!"]),
    Case("ERR-A04", "has instr-tl cpu_cuda_stream_instr; not allowed in scope using "
         "cuda_basic_device", [T + "cudaMemsetAsync0_1f32(256, y[task, :])  #!"]),
    Case("ERR-A04", "has instr-tl cpu_in_order_instr; not allowed",
         [T + "h(n)  #!"], prelude=["", "", "@proc", "def h(m: size):", "    pass"]),
    Case("ERR-A04", "has instr-tl cuda_in_order_instr; not allowed in scope using "
         "cpu_basic_device", ["    Sm80_mma_zero_d_tf32(d[:, :])  #!"], kernel=False,
         sig="n: size, d: f32[16, 8] @ Sm80_RmemMatrixD(16, 8)"),
    Case("ERR-A06", ") requires cpu_basic_device",
         [T + "with CudaDeviceFunction(blockDim=32):  #!", T + "    for t2 in cuda_tasks(0, n):",
          T + "        pass"]),
    Case("ERR-A07", "but got an argument in CudaRmem",
         [*LOOP, T + "    r: f32[4] @ CudaRmem",
          T + "    Sm80_cp_async_f32(r[0:4], x[task, 0:4], size=4)  #!"]),
    Case("ERR-A08", "expects x2[0:64, 0:64] to be in memory CudaGmemLinear but it's actually in "
         "DRAM", ["    x2: f32[64, 64] @ DRAM", "    tm = x2[:, :] @ Sm90_tensorMap(0, 8, 8)  #!"],
         kernel=False),
    Case("ERR-A09", "does not take trailing barrier expression >> cg[t]",
         [T + "s: f32[256, 4] @ CudaSmemLinear", T + "cg: barrier[256] @ CudaCommitGroup", *LOOP,
          T + "    Sm80_cp_async_f32(s[t, 0:4], x[task, 0:4], size=4) >> cg[t]  #!"]),
    Case("ERR-A10", "expected last 2 idx to have points before intervals",
         [*WARPS, T + "    d: f32[16, 8] @ Sm80_RmemMatrixD(16, 8)",
          T + "    Sm80_mma_zero_d_tf32(d[0, 0:8])  #!"]),
    Case("ERR-A10", "expected last 1 idx to have points before intervals",
         [*LOOP, T + "    r: f32[4, 1] @ CudaRmemPacked32", T + "    v = r[0:2, 0]  #!"]),
    Case("ERR-A11", "Fence not allowed", ["    Fence(cuda_in_order, cuda_in_order)  #!"],
         kernel=False),
    Case("ERR-A13", "not a cuda_tasks loop", ["    with CudaDeviceFunction(blockDim=128):",
                                               "        for t in seq(0, n):  #!",
                                               "            pass"], kernel=False),
    Case("ERR-A13", "must appear only in top level nest",
         [T + "pass", T + "for t2 in cuda_tasks(0, n):  #!", T + "    pass"]),
    Case("ERR-A14", "outside CUDA device function", ["    for t in cuda_threads(0, 4):  #!",
                                                     "        pass"], kernel=False),
    Case("ERR-A14", "unexpected loop mode par in CudaDeviceFunction",
         [T + "for t in par(0, 4):  #!", T + "    pass"]),
    Case("ERR-A15", "grid constant parameter w cannot be a window",
         [*GRID_WINDOW, T + "    y[task, t] = w[0]  #!"], kernel=False, at="w[0]"),
    Case("ERR-A15", "grid constant parameter g cannot be a window",
         [*LOOP, T + "    y[task, t] = g[0]  #!"], at="g[0]",
         sig="n: size, g: [f32][4] @ CudaGridConstant, y: f32[n, 256] @ CudaGmemLinear"),
    Case("ERR-A16", "Cannot allocate scalar CudaGmemLinear",
         ["    g: f32 @ CudaGmemLinear  #!"], kernel=False),
    Case("ERR-A16", "requires constant shape", [T + "s: f32[n] @ CudaSmemLinear  #!", T + "pass"]),
    Case("ERR-A16", "CudaRmemPacked32 doesn't support i8",
         [*LOOP, T + "    r: i8[4] @ CudaRmemPacked32  #!"]),
    Case("ERR-A16", "requires constant positive extents",
         [T + "b: barrier[n] @ CudaCommitGroup  #!"]),
    Case("ERR-A18", "one thread only", [*WARPS, T + "    y[task, w] = 1.0  #!"]),
    # the memory the write targets, as upstream names it (endgame's test_rmem_uniform_wrong_gmem)
    Case("ERR-A18", "one thread only (current: 32 threads) (a write of y @ CudaGmemLinear)",
         [*WARPS, T + "    y[task, w] = 1.0  #!"]),
    Case("ERR-A19", "wrong collective unit (need cuda_warp) for Sm80_mma_zero_d_tf32()",
         [T + "d: f32[16, 8] @ Sm80_RmemMatrixD(16, 8)", T + "Sm80_mma_zero_d_tf32(d[:, :])  #!"]),
    Case("ERR-A20", "expected 0 for lo", [T + "for t in cuda_threads(1, 4):  #!", T + "    pass"],
         at="1, 4"),
    Case("ERR-A20", "expected literal int value", [T + "for t in cuda_threads(0, n):  #!",
                                                  T + "    pass"], at="n)"),
    Case("ERR-A20", "hi must be ≥ 1", [T + "for t in cuda_threads(0, 0):  #!", T + "    pass"],
         at="0)"),
    Case("ERR-A21", "not enough threads", [T + "for t in cuda_threads(0, 300):  #!",
                                           T + "    pass"]),
    Case("ERR-A21", "ambiguous dimension to tile",
         [T + "for t in cuda_threads(0, 2, unit=CollUnit((16, 16), (8, 8))):  #!",
          T + "    pass"]),
    Case("ERR-A22", "cannot change warp name", [T + "with CudaWarps(name='x'):  #!",
                                                T + "    pass"]),
    Case("ERR-A22", "cannot have with CudaWarps outside CUDA device function",
         ["    with CudaWarps(0, 1):  #!", "        pass"], kernel=False),
    Case("ERR-A23", "Distributed memory deduction", [T + "acc: f32[256] @ CudaRmem  #!", *LOOP,
                                                     T + "    acc[255 - t] = x[task, t]"]),
    Case("ERR-L01", "wgmma fence needs second sync-tl wgmma_fence_2",
         [T + WG, T + "    Fence(wgmma_fence_1, cuda_in_order)  #!"]),
    Case("ERR-L01", "wgmma fence must be executed by a warpgroup",
         [*WARPS, T + "    Fence(wgmma_fence_1, wgmma_fence_2)  #!"]),
    Case("ERR-L02", "matched no known case", [T + "with CudaWarps(1, 3):",
                                               T + "    Fence(cuda_in_order, cuda_in_order)  #!"]),
    Case("ERR-L02", "not supported", [T + "Fence(wgmma_async, cuda_in_order)  #!"]),
    Case("ERR-L02", "Sm80_cp_async not supported as second sync-tl",
         [T + "Fence(cuda_in_order, Sm80_cp_async)  #!"]),
    Case("ERR-L05", "CudaEvent not supported in CUDA device function",
         [T + "ev: barrier @ CudaEvent  #!"]),
    # COLL-3.3 / COLL-6.2 (specs/collectives.md): a 33-thread op then CudaWarps(0, 1) is an
    # aligned warp on the guards, but its unit completion fails (upstream rejects it too).
    Case("ERR-V08", "tiling model disagrees with generated guards",
         ["    with CudaDeviceFunction(blockDim=64):", "        for task in cuda_tasks(0, n):",
          T + "for t in cuda_threads(0, 1, unit=33 * cuda_thread):",
          T + "    with CudaWarps(0, 1):", T + "        Fence(cuda_in_order, cuda_in_order)  #!"],
         kernel=False),
]

DEFERRED = [  # a static error after a Hopper construct is reported (exit 2)
    Case("ERR-A18", "one thread only", [T + WG, T + "    Fence(wgmma_fence_1, wgmma_fence_2)",
                                        *WARPS, T + "    y[task, w] = 1.0  #!"]),
]

LOW_LEVEL = {"ERR-A12", "ERR-L06"}


@pytest.mark.rule("LANG-4.2")
@pytest.mark.rule("LANG-5.20")
@pytest.mark.rule("COLL-3.3")
@pytest.mark.parametrize("case", CASES + DEFERRED, ids=[c.id for c in CASES + DEFERRED])
def test_analysis_errors_report_code_keyword_and_location(tmp_path: Path, case: Case) -> None:
    check_case(tmp_path, case)


@pytest.mark.rule("SEM-3.3")
def test_missing_qual_tl_is_err_a12() -> None:
    """ERR-A12 cannot be reached from a program: every (memory, instr-tl) pair without a
    SEM-3.3 entry is refused earlier by permissions (ERR-A01) or formal memories (ERR-A07).
    The lowest API that raises it is the table lookup itself."""
    with pytest.raises(RejectedInput) as exc:
        rules.qual_entry("host", InstrTL.cuda_in_order_instr, "x @ DRAM")
    assert exc.value.code == "ERR-A12"
    assert "no qual-tl for (x @ DRAM) given instr-tl cuda_in_order_instr" in exc.value.message


@pytest.mark.rule("LANG-8.2")
def test_codegen_legality_is_err_l06(tmp_path: Path) -> None:
    """ERR-L06 comes from code generation only (LANG-8.7): here a CTA larger than CUDA can
    launch, located at the device function. `CudaDeviceFunction` itself refuses such a
    blockDim (LANG-4.4, below), so the config is widened behind its back: codegen must still
    refuse on its own."""
    import copy
    import dataclasses

    from verifier.codegen.plan import plan_device_function

    path = tmp_path / "big.py"
    path.write_text(Case("ERR-L06", "", ["    with CudaDeviceFunction(blockDim=1024):  #!",
                                         "        for task in cuda_tasks(0, n):",
                                         "            pass"], kernel=False).source())
    (p,) = load_procs(path)
    assert isinstance(p, ir.Proc)
    (dev,) = [s for s in p.body if isinstance(s, ir.DeviceFunction)]
    wide = copy.copy(dev.cfg)
    object.__setattr__(wide, "blockDim", 2048)
    with pytest.raises(RejectedInput) as exc:
        plan_device_function(dataclasses.replace(dev, cfg=wide), 0)
    assert exc.value.code == "ERR-L06" and "cannot launch blockDim=2048" in exc.value.message
    assert (exc.value.loc.file, exc.value.loc.line, exc.value.loc.col) == (str(path), 6, 5)


@pytest.mark.rule("LANG-4.4")
def test_blockdim_over_1024_is_refused_where_written(tmp_path: Path) -> None:
    """A blockDim CUDA cannot launch is ERR-O01 at its `with` line, before any analysis sizes
    per-thread tables by it (blockDim=10**12 once ended in MemoryError)."""
    path = tmp_path / "huge.py"
    path.write_text(Case("ERR-O01", "", ["    with CudaDeviceFunction(blockDim=10**12):  #!",
                                         "        for task in cuda_tasks(0, n):",
                                         "            pass"], kernel=False).source())
    with pytest.raises(RejectedInput) as exc:
        load_procs(path)
    assert exc.value.code == "ERR-O01" and "exceeds 1024" in exc.value.message
    assert (exc.value.loc.file, exc.value.loc.line) == (str(path), 6)


@pytest.mark.rule("LANG-8.2")
def test_usage_error_names_the_proc(tmp_path: Path) -> None:
    """ERR-USAGE (not a catalog code): `--sizes` without a value for every size argument."""
    from verifier.encode.concrete import run_concrete

    path = tmp_path / "prog.py"
    path.write_text(Case("ERR-USAGE", "", ["    pass"], kernel=False).source())
    (p,) = load_procs(path)
    assert isinstance(p, ir.Proc)
    with pytest.raises(RejectedInput) as exc:
        run_concrete(p, {})
    assert exc.value.code == "ERR-USAGE" and "--sizes lacks a value for n" in exc.value.message
    assert exc.value.loc.line == 5
