"""Obligation ids are unique within a proc (specs/verification.md, "Obligation ids").

`cut_loop` copies a loop body; the copies keep their source locations, so a hazard pair inside
the first copy and the same pair across the cut name the same lines. Answers are keyed by
id: with a shared id, the proved single-iteration pair answered for the racy pair across
the cut, and this program was proved."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from verifier.encode import verify_proc
from verifier.load.load_isolated import load_isolated
from verifier.results import Verdict

RACE_ACROSS_ITERATIONS = """from __future__ import annotations
from exo import *
from exo.platforms.cuda import *
from exo.stdlib.scheduling import *

@proc
def k(n: size, m: size, x: f32[n, 4] @ CudaGmemLinear, y: f32[n, 4] @ CudaGmemLinear):
    assert m > 2
    with CudaDeviceFunction(blockDim=32):
        for blk in cuda_tasks(0, n):
            s: f32[4] @ CudaSmemLinear
            for it in seq(0, m):
                for t in cuda_threads(0, 4):
                    s[t] = x[blk, t]
                Fence(cuda_in_order, cuda_in_order)
                for t in cuda_threads(0, 4):
                    y[blk, t] = s[3 - t]
            Fence(cuda_in_order, cuda_in_order)

k = cut_loop(k, k.find_loop('it'), 1)
"""


@pytest.mark.rule("SEM-4.5")
def test_a_race_across_a_cut_loop_is_refuted_with_unique_ids(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(RACE_ACROSS_ITERATIONS)
    loaded = load_isolated(path)
    assert loaded.error is None, loaded.error
    (p,) = loaded.procs
    result = verify_proc(p)
    counts = Counter(o.id for o in result.obligations)
    assert max(counts.values()) == 1, counts
    assert any(o.id.endswith("#2") for o in result.obligations)
    assert result.verdict is Verdict.refuted
    (finding,) = [f for f in result.findings if f.counterexample and f.counterexample.replayed]
    assert finding.kind.value == "WAR" and finding.variable == "s"

