"""Property-based: random tier-1 procs (nests of cuda_threads and seq loops over a shared
buffer, fences at random places and scopes) get the same verdict from the prover as from the
concrete machine. Tasks do not interact, so the machine at n = 1 and n = 2 decides every n."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.encode import concrete_verdict, verify_proc
from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.results import Verdict

INDEX = {"id": "{t}", "rev": "{B} - 1 - {t}", "rot": "({t} + 1) % {B}", "half": "{t} / 2"}


def _phase(draw: st.DrawFn, B: int, depth: int) -> list[str]:
    kind = draw(st.sampled_from(["write", "read", "reduce", "warp_write", "warp_read", "seq",
                                 "fence", "warp_fence", "temporal_fence"]))
    pad = "    " * depth
    perm = draw(st.sampled_from(sorted(INDEX)))
    idx = INDEX[perm].format(t="t", B=B)
    if kind == "write":
        return [f"{pad}for t in cuda_threads(0, {B}):", f"{pad}    s[{idx}] = x[task, t]"]
    if kind == "read":
        return [f"{pad}for t in cuda_threads(0, {B}):", f"{pad}    y[task, t] = s[{idx}]"]
    if kind == "reduce":
        return [f"{pad}for t in cuda_threads(0, {B}):", f"{pad}    s[{idx}] += x[task, t]"]
    if kind in ("warp_write", "warp_read"):
        stmt = "s[32 * w + l] = x[task, 32 * w + l]" if kind == "warp_write" else \
            "y[task, 32 * w + l] = s[32 * w + 31 - l]"
        lines = [f"{pad}for w in cuda_threads(0, {B // 32}, unit=cuda_warp):",
                 f"{pad}    for l in cuda_threads(0, 32):", f"{pad}        {stmt}"]
        if draw(st.booleans()):
            lines.insert(3 if kind == "warp_read" else 3, f"{pad}    Fence(cuda_in_order, cuda_in_order)")
        return lines
    if kind == "seq" and depth < 4:
        body = []
        for _ in range(draw(st.integers(1, 3))):
            body += _phase(draw, B, depth + 1)
        return [f"{pad}for k in seq(0, 2):"] + body
    if kind == "warp_fence":
        return [f"{pad}for w in cuda_threads(0, {B // 32}, unit=cuda_warp):",
                f"{pad}    Fence(cuda_in_order, cuda_in_order)"]
    if kind == "temporal_fence":
        return [f"{pad}Fence(cuda_in_order, cuda_temporal)"]
    return [f"{pad}Fence(cuda_in_order, cuda_in_order)"]


@st.composite
def tier1_program(draw: st.DrawFn) -> str:
    B = draw(st.sampled_from([32, 64, 128]))
    body: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        body += _phase(draw, B, 3)
    if draw(st.booleans()):
        body.append("            Fence(cuda_in_order, cuda_in_order)")
    head = [
        "from verifier.lang import *", "", "",
        "@proc",
        f"def gen(n: size, x: f32[n, {B}] @ CudaGmemLinear, y: f32[n, {B}] @ CudaGmemLinear):",
        f"    with CudaDeviceFunction(blockDim={B}):",
        "        for task in cuda_tasks(0, n):",
        f"            s: f32[{B}] @ CudaSmemLinear",
    ]
    return "\n".join(head + body) + "\n"


def _load(source: str, tmp: Path) -> ir.Proc:
    path = tmp / f"gen_{abs(hash(source))}.py"
    path.write_text(source)
    (proc,) = load_procs(path)
    assert isinstance(proc, ir.Proc), proc
    return proc


SMOKE_EXAMPLES = 12  # the default run; `-m slow` runs the profile's count (60, or 1500)


@settings(max_examples=SMOKE_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tier1_program())
def test_symbolic_agrees_with_machine(tmp_path: Path, source: str) -> None:
    _symbolic_agrees_with_machine(tmp_path, source)


@pytest.mark.slow  # the whole campaign; .ci/run runs it
@settings(deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tier1_program())
def test_symbolic_agrees_with_machine_campaign(tmp_path: Path, source: str) -> None:
    _symbolic_agrees_with_machine(tmp_path, source)


def _symbolic_agrees_with_machine(tmp_path: Path, source: str) -> None:
    proc = _load(source, tmp_path)
    symbolic = verify_proc(proc).verdict
    concrete = {concrete_verdict(proc, {"n": n})[0] for n in (1, 2)}
    expected = Verdict.refuted if Verdict.refuted in concrete else Verdict.proved
    if "s[" not in source:  # only fences: nothing to check is vacuous, never proved
        expected = Verdict.vacuous
    assert symbolic is not Verdict.unknown, source
    assert symbolic == expected, source
