"""Closed-form barrier counters over non-rectangular nests (encode/nest_sums.py, SEM-6.4):
the sympy sum, emitted as a Z3 term, equals brute-force enumeration of the sequential trace."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import z3

from verifier.load.load import load_procs
from verifier.check.static import analyze
from verifier.encode.barrier_counts import BarrierCounts
from verifier.encode.instances import Encoder

NESTS = {  # (outer loop header, inner loop header, python ranges for enumeration)
    "triangle": ("for i in seq(0, n):", "for j in seq(0, i + 1):",
                 lambda n: [(i, j) for i in range(n) for j in range(i + 1)]),
    "upper": ("for i in seq(0, n):", "for j in seq(i, n):",
              lambda n: [(i, j) for i in range(n) for j in range(i, n)]),
    "strip": ("for i in seq(1, n):", "for j in seq(2 * i, 3 * i + n / 4):",
              lambda n: [(i, j) for i in range(1, n) for j in range(2 * i, 3 * i + n // 4)]),
}
GUARDED = {  # rectangular nests with `if`s around the site: narrowed loop ranges (SEM-6.4)
    "upper_guard": ("for i in seq(0, n):", "if i + 2 < n:", lambda n: [i for i in range(n - 2)]),
    "window": ("for i in seq(0, n):", "if 1 <= i and i < 5:", lambda n: list(range(1, min(n, 5)))),
    "reversed": ("for i in seq(0, n):", "if n - 3 > i:", lambda n: list(range(max(n - 3, 0)))),
    "size_only": ("for i in seq(0, n):", "if n > 3:", lambda n: list(range(n)) if n > 3 else []),
    "equal": ("for i in seq(0, n):", "if i == 2:", lambda n: [2] if n > 2 else []),
}


def _program(tmp_path: Path, outer: str, inner: str) -> Path:
    body = f"""
    from verifier.lang import *


    @proc
    def nest(n: size, y: f32[32] @ CudaGmemLinear):
        with CudaDeviceFunction(blockDim=32):
            for task in cuda_tasks(0, 1):
                cg: barrier[32] @ CudaCommitGroup
                {outer}
                    {inner}
                        for t in cuda_threads(0, 32):
                            Arrive(Sm80_cp_async, 1) >> cg[t]
                            Await(cg[t], cuda_in_order, 0)
                for t in cuda_threads(0, 32):
                    y[t] = 0.0
    """
    path = tmp_path / "nest.py"
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize("shape", sorted(NESTS))
def test_counter_equals_enumeration(tmp_path: Path, shape: str) -> None:
    outer, inner, trace = NESTS[shape]
    (proc,) = load_procs(str(_program(tmp_path, outer, inner)))
    model = analyze(proc)
    zctx = z3.Context()
    controls = {a.name: a.typ for a in proc.args if hasattr(a.typ, "kind")}
    enc = Encoder(controls, proc.preds, zctx)
    counts = BarrierCounts(enc, model)
    (site,) = model.awaits
    (decl,) = model.barriers.values()
    point = enc.instance(site.ctx, "p")
    elem = tuple(enc.value(e, point.iters) for e in site.element)
    arrived = counts.arrives_before(decl, elem, point)
    n_var = next(iter(enc.sizes.values()))
    loops = [lp.sym for lp in site.ctx.loops if lp.kind == "seq"]
    for n in range(0, 9):
        for rank, (i, j) in enumerate(trace(n)):
            subst = [(n_var, z3.IntVal(n, zctx)),
                     (point.iters[loops[0]], z3.IntVal(i, zctx)),
                     (point.iters[loops[1]], z3.IntVal(j, zctx))]
            subst += [(v, z3.IntVal(0, zctx)) for s, v in point.iters.items()
                      if s not in loops]
            value = z3.simplify(z3.substitute(arrived, *subst))
            assert value.as_long() == rank + 1, (shape, n, i, j)  # + this iteration's Arrive
    assert enc.premises, "a non-rectangular nest leaves its extent premises to discharge"


def test_premise_fails_when_an_extent_can_be_negative(tmp_path: Path) -> None:
    from verifier.encode import verify_proc
    from verifier.results import Verdict
    (proc,) = load_procs(str(_program(tmp_path, "for i in seq(0, n):",
                                      "for j in seq(0, 3 - i):")))
    result = verify_proc(proc)
    assert result.verdict is not Verdict.proved
    premise = [o for o in result.obligations if o.id.startswith("extent@")]
    assert any(o.status.value != "proved" for o in premise)




@pytest.mark.parametrize("shape", sorted(GUARDED))
def test_guarded_counter_equals_enumeration(tmp_path: Path, shape: str) -> None:
    outer, guard, trace = GUARDED[shape]
    (proc,) = load_procs(str(_program(tmp_path, outer, guard)))
    model = analyze(proc)
    zctx = z3.Context()
    controls = {a.name: a.typ for a in proc.args if hasattr(a.typ, "kind")}
    enc = Encoder(controls, proc.preds, zctx)
    counts = BarrierCounts(enc, model)
    (site,) = model.awaits
    (decl,) = model.barriers.values()
    point = enc.instance(site.ctx, "p")
    elem = tuple(enc.value(e, point.iters) for e in site.element)
    arrived = counts.arrives_before(decl, elem, point)
    n_var = next(iter(enc.sizes.values()))
    (loop,) = [lp.sym for lp in site.ctx.loops if lp.kind == "seq"]
    for n in range(0, 9):
        for rank, i in enumerate(trace(n)):
            subst = [(n_var, z3.IntVal(n, zctx)), (point.iters[loop], z3.IntVal(i, zctx))]
            subst += [(v, z3.IntVal(0, zctx)) for s, v in point.iters.items() if s != loop]
            value = z3.simplify(z3.substitute(arrived, *subst))
            assert value.as_long() == rank + 1, (shape, n, i)
