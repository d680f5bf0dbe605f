"""Property-based, tier 2: random cp.async pipelines over per-thread commit groups (prologue
depth, ring slots, the guard on the prefetch, whether the Arrive sits under it, wait_group N,
the final wait) get the same verdict from the all-sizes prover as from the concrete machine
over K = 0 .. 6 (SEM-6.3, 6.4, 6.6). The pipeline's state repeats once K exceeds its depth."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.encode import concrete_verdict, verify_proc
from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.results import Verdict


@st.composite
def pipeline_program(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 2))  # tiles in flight ahead of the one being read
    slots = draw(st.integers(depth, depth + 1))
    wait_n = draw(st.integers(0, depth + 1))
    guard = draw(st.sampled_from([f"k + {depth} < K", f"k < K - {depth}", None]))
    arrive_inside = draw(st.booleans()) and guard is not None
    final_wait = draw(st.sampled_from([True, True, False]))
    read_lane = draw(st.sampled_from(["t", "(t + 1) % 32"]))
    copy = ("Sm80_cp_async_f32(s[({k}) % {S}, t, 0:4], g[32 * task + t, 4 * ({k}) : 4 * ({k}) + 4], "
            "size=4)")
    pad = "                    "
    body = [f"            for p in seq(0, {depth}):",
            "                for t in cuda_threads(0, 32):",
            "                    if p < K:",
            "                        " + copy.format(k="p", S=slots),
            "                    Arrive(Sm80_cp_async, 1) >> cg[t]",
            "            for k in seq(0, K):",
            "                for t in cuda_threads(0, 32):"]
    prefetch = copy.format(k=f"k + {depth}", S=slots)
    if guard is None:
        body += [pad + f"if k + {depth} < K:", pad + "    " + prefetch,
                 pad + "Arrive(Sm80_cp_async, 1) >> cg[t]"]
    elif arrive_inside:
        body += [pad + f"if {guard}:", pad + "    " + prefetch,
                 pad + "    Arrive(Sm80_cp_async, 1) >> cg[t]"]
    else:
        body += [pad + f"if {guard}:", pad + "    " + prefetch,
                 pad + "Arrive(Sm80_cp_async, 1) >> cg[t]"]
    body += [pad + f"Await(cg[t], cuda_in_order, {wait_n})",
             "                Fence(cuda_in_order, cuda_in_order)",
             "                for t in cuda_threads(0, 32):",
             f"                    y[32 * task + t, k] = s[k % {slots}, {read_lane}, 0]",
             "                Fence(cuda_in_order, cuda_in_order)"]
    if final_wait:
        body += ["            for t in cuda_threads(0, 32):",
                 "                Await(cg[t], cuda_in_order, 0)"]
    head = [
        "from verifier.lang import *", "", "",
        "@proc",
        "def pipe(M: size, K: size, g: f32[M, 4 * K + 16] @ CudaGmemLinear, "
        "y: f32[M, K] @ CudaGmemLinear):",
        "    assert M % 32 == 0",
        "    with CudaDeviceFunction(blockDim=32):",
        "        for task in cuda_tasks(0, M / 32):",
        f"            s: f32[{slots}, 32, 4] @ CudaSmemLinear",
        "            cg: barrier[32] @ CudaCommitGroup",
    ]
    return "\n".join(head + body) + "\n"


def _load(source: str, tmp: Path) -> ir.Proc:
    path = tmp / f"pipe_{abs(hash(source))}.py"
    path.write_text(source)
    (proc,) = load_procs(path)
    assert isinstance(proc, ir.Proc), proc
    return proc


@pytest.mark.slow  # about 10 s per refuted example (several refinement levels and replays)
@settings(deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(pipeline_program())
def test_pipeline_prover_agrees_with_machine(tmp_path: Path, source: str) -> None:
    proc = _load(source, tmp_path)
    result = verify_proc(proc)
    concrete = {concrete_verdict(proc, {"M": 32, "K": k})[0] for k in range(7)}
    if Verdict.rejected in concrete:
        assert result.verdict is Verdict.rejected, source
        return
    expected = Verdict.refuted if Verdict.refuted in concrete else Verdict.proved
    assert result.verdict is not Verdict.unknown, (source, [f.message for f in result.findings])
    assert result.verdict == expected, (source, [f.message for f in result.findings])
