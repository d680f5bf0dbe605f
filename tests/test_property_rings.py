"""Property-based, tier 2: random warp-specialized producer/consumer rings over a guarded
mbarrier pair (ring size, both lags, await sync-tls, slot indexing, the final fence) get the
same verdict from the all-sizes prover as from the concrete machine run over every trip count
up to past the ring's period (SEM-6, SEM-6.8). A ring's behaviour repeats with period R once
K exceeds the ring depth, so K ≤ depth + R + 2 decides every K."""

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
def ring_program(draw: st.DrawFn) -> tuple[str, int]:
    R = draw(st.integers(1, 3))
    lag_empty = draw(st.integers(max(R - 1, 0), R + 1))
    lag_full = draw(st.integers(0, 1))
    produce_tl = draw(st.sampled_from(["cuda_temporal", "cuda_in_order"]))
    consume_tl = draw(st.sampled_from(["cuda_in_order", "cuda_in_order", "cuda_temporal"]))
    read_slot = draw(st.sampled_from(["k % R", "k % R", "(k + 1) % R"]))
    lane = draw(st.sampled_from(["31 - l", "l"]))
    final_fence = draw(st.sampled_from([True, True, False]))
    lines = [
        "from verifier.lang import *", "", f"R = {R}", "", "",
        "@proc",
        "def ring(T: size, K: size, inp: f32[T, K, 32] @ CudaGmemLinear, "
        "y: f32[T, K, 32] @ CudaGmemLinear):",
        "    with CudaDeviceFunction(blockDim=64):",
        "        for task in cuda_tasks(0, T):",
        "            buf: f32[R, 32] @ CudaSmemLinear",
        "            full: barrier @ CudaMbarrier",
        "            empty: barrier(full) @ CudaMbarrier",
        "            for k in seq(0, K):",
        "                with CudaWarps(0, 1):",
        f"                    Await(empty, {produce_tl}, ~{lag_empty})",
        "                    for l in cuda_threads(0, 32):",
        "                        buf[k % R, l] = inp[task, k, l]",
        "                    Arrive(cuda_in_order) >> full",
        "                with CudaWarps(1, 2):",
        f"                    Await(full, {consume_tl}, ~{lag_full})",
        "                    for l in cuda_threads(0, 32):",
        f"                        y[task, k, l] = buf[{read_slot}, {lane}]",
        "                    Arrive(cuda_in_order) >> empty",
    ]
    if final_fence:
        lines.append("            Fence(cuda_in_order, cuda_in_order)")
    return "\n".join(lines) + "\n", lag_empty + lag_full + R + 2


def _load(source: str, tmp: Path) -> ir.Proc:
    path = tmp / f"ring_{abs(hash(source))}.py"
    path.write_text(source)
    (proc,) = load_procs(path)
    assert isinstance(proc, ir.Proc), proc
    return proc


SMOKE_EXAMPLES = 12  # the default run; `-m slow` runs the profile's count (60, or 1500)


@settings(max_examples=SMOKE_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ring_program())
def test_ring_prover_agrees_with_machine(tmp_path: Path, case: tuple[str, int]) -> None:
    _ring_prover_agrees_with_machine(tmp_path, case)


@pytest.mark.slow  # the whole campaign; .ci/run runs it
@settings(deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ring_program())
def test_ring_prover_agrees_with_machine_campaign(tmp_path: Path, case: tuple[str, int]) -> None:
    _ring_prover_agrees_with_machine(tmp_path, case)


def _ring_prover_agrees_with_machine(tmp_path: Path, case: tuple[str, int]) -> None:
    source, horizon = case
    proc = _load(source, tmp_path)
    result = verify_proc(proc)
    concrete = {concrete_verdict(proc, {"T": 1, "K": k})[0] for k in range(horizon + 1)}
    if Verdict.rejected in concrete:
        assert result.verdict is Verdict.rejected, source
        return
    expected = Verdict.refuted if Verdict.refuted in concrete else Verdict.proved
    assert result.verdict is not Verdict.unknown, (source, [f.message for f in result.findings])
    assert result.verdict == expected, (source, [f.message for f in result.findings])
    if expected is Verdict.refuted:
        assert any(f.counterexample is not None and f.counterexample.replayed
                   for f in result.findings)
