"""Hazard pairs without visiting every pair (encode/pairs.py, PR-4) and the one-instance rule
(PR-7): the sweep keeps exactly the pairs the per-pair definition of PR-4 keeps, and every pair
PR-7 settles is one the solver proves (specs/verification.md "Pruning")."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.check import analyze
from verifier.check.sites import AccessSite
from verifier.diagnostics import SporkError
from verifier.encode import Options, verify_proc
from verifier.encode.discharge import clear_cache
from verifier.encode.obligations import ObligationBuilder, required_flag
from verifier.encode.pairs import is_cover, kept_pairs, pattern
from verifier.encode.pruning import _anchors, _common
from verifier.encode.solver import Status, prepare, solve
from verifier.collectives.symbolic import fresh_context
from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.results import Verdict

from conftest import EXAMPLES, ROOT, benchmark, kernel_files, load_one


def _dominated(sa: AccessSite, sb: AccessSite, writes: list[AccessSite]) -> bool:
    """PR-4 for one pair, as the spec states it: some write C covering a (or b) at the depth
    m of the loops it shares with both, lying between them (`_anchors`). Self pairs are kept."""
    if sa is sb:
        return False
    pa, pb = sa.ctx.path, sb.ctx.path
    shared = _common(sa.ctx.loops, sb.ctx.loops)
    ends = [(sa, sb, "a")] + ([] if sb.is_free else [(sb, sa, "b")])
    for m in (range(shared + 1) if pa < pb else (shared,)):
        for sx, other, anchor in ends:
            pat, conds = pattern(sx, m)
            for sc in writes:
                if sc is sx or sc is other or _common(sc.ctx.loops, sx.ctx.loops) != m or \
                        _common(sc.ctx.loops, other.ctx.loops) != m:
                    continue
                pc, conds_c = pattern(sc, m)
                if pc != pat or not conds_c <= conds:
                    continue
                p = sc.ctx.path
                between = pa < p < pb if pa < pb else (pa < p if anchor == "a" else p < pb)
                if between and anchor in _anchors(pa, p, pb, m == shared):
                    return True
    return False


def _variables(path: Path) -> list[list[AccessSite]]:
    out = []
    try:
        procs = [p for p in load_procs(path) if isinstance(p, ir.Proc)]
    except SporkError:
        return out
    for proc in procs:
        try:
            model = analyze(proc)
        except SporkError:
            continue
        by_var: dict[ir.Sym, list[AccessSite]] = {}
        for s in model.accesses:
            if s.tracked:
                by_var.setdefault(s.buf, []).append(s)
        out += list(by_var.values())
    return out


def _check_same_pairs(sites: list[AccessSite]) -> None:
    writes = [w for w in sites if is_cover(w)]
    expected = {(a.id, b.id) for b in sites for a in sites
                if not a.is_free and required_flag(a, b) is not None
                and not _dominated(a, b, writes)}
    kept = [(a.id, b.id) for a, b in kept_pairs(sites)]
    assert len(kept) == len(set(kept)), "a pair listed twice"
    got = {(a, b) for a, b in kept
           if required_flag(*[next(s for s in sites if s.id == i) for i in (a, b)])}
    assert got == expected


@pytest.mark.rule("PR-4")
@pytest.mark.parametrize("path", [  # every fourth file by default, every one in .ci/run (issue 20)
    pytest.param(p, marks=[] if k % 4 == 0 else [pytest.mark.extended]) for k, p in
    enumerate(kernel_files() + sorted((ROOT / "tests" / "upstream_style").glob("*.py")))],
    ids=lambda p: p.name)
def test_sweep_keeps_exactly_the_pairs_of_the_definition(path: Path) -> None:
    for sites in _variables(path):
        _check_same_pairs(sites)


@pytest.mark.rule("PR-4")
@pytest.mark.parametrize("shape", ["ping_pong", "one_element", "read_modify_write", "nest"])
def test_sweep_on_generated_kernels(tmp_path, shape: str) -> None:
    path = tmp_path / f"{shape}.py"
    path.write_text(benchmark("scaling").KERNELS[shape](24))
    for sites in _variables(path):
        _check_same_pairs(sites)


def _pr7_queries(path: Path, name: str) -> int:
    """Build and solve the level-0 query of every pair PR-7 settles: each must be unsat."""
    proc = load_one(path, name)
    builder = ObligationBuilder(analyze(proc), fresh_context())
    settled = [ob for ob in builder.all() if ob.discharged_by == "PR-7"]
    for ob in settled:
        built = ob.build(0, False)
        answer = solve(prepare(built.constraints, 2_000_000, nonlinear=built.nonlinear))
        assert answer.status is Status.proved, ob.id
    return len(settled)


@pytest.mark.rule("PR-7")
def test_one_instance_rule_settles_only_what_the_solver_proves(tmp_path) -> None:
    count = 0
    for stem in ("smem_matmul", "smem_exchange", "block_reduce", "gemm_sm80", "saxpy"):
        for p in load_procs(EXAMPLES / f"{stem}.py"):
            if isinstance(p, ir.Proc):
                count += _pr7_queries(EXAMPLES / f"{stem}.py", p.name)
    for shape in ("one_element", "read_modify_write", "ping_pong"):
        path = tmp_path / f"{shape}.py"
        path.write_text(benchmark("scaling").KERNELS[shape](6))
        count += _pr7_queries(path, shape)
    assert count > 20


@pytest.mark.rule("PR-7")
def test_one_instance_needs_an_injective_index(tmp_path) -> None:
    """Every thread writing a[0] is a race PR-7 must not settle: two instances (threads) touch
    one element, so the self pair and the pair of the two statements go to the solver."""
    path = tmp_path / "shared_slot.py"
    path.write_text(
        "from verifier.lang import *\n\n\n@proc\n"
        "def shared_slot(n: size, x: f32[n] @ CudaGmemLinear):\n"
        "    assert n % 256 == 0\n"
        "    with CudaDeviceFunction(blockDim=256):\n"
        "        for blk in cuda_tasks(0, n / 256):\n"
        "            a: f32[256] @ CudaSmemLinear\n"
        "            for t in cuda_threads(0, 256):\n"
        "                a[t] = x[256 * blk + t]\n"
        "            Fence(cuda_in_order, cuda_in_order)\n"
        "            for t in cuda_threads(0, 256):\n"
        "                a[0] = a[t] + 1.0\n"
        "            Fence(cuda_in_order, cuda_in_order)\n")
    clear_cache()
    result = verify_proc(load_one(path, "shared_slot"), Options())
    assert result.verdict is Verdict.refuted
    assert {(f.kind.value, f.variable, f.loc.line) for f in result.findings} >= \
        {("WAW", "a", 14)}
    pr7 = {o.id for o in result.obligations if o.discharged_by == "PR-7"}
    assert "WAW:a@14:17->14:17" not in pr7 and "WAW:a@11:17->11:17" in pr7
