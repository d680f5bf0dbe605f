"""Large generated kernels (issues 19, 20; benchmarks/scaling.py): proved with a number of
solver queries that does not grow with the kernel, and a seeded bug in a large one still
refuted at its line with a counterexample the machine replays."""

from __future__ import annotations

import pytest

from verifier.encode import Options, verify_proc
from verifier.encode.discharge import clear_cache
from verifier.results import Verdict

from conftest import benchmark, load_one


def _verify(tmp_path, name: str, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    clear_cache()
    return verify_proc(load_one(path, name), Options())


@pytest.mark.rule("PR-4")
@pytest.mark.rule("PR-7")
@pytest.mark.parametrize("shape, size", [  # one_element's in .ci/run (issue 20)
    ("ping_pong", 3000), pytest.param("one_element", 3000, marks=pytest.mark.extended),
    ("read_modify_write", 1000)])
def test_large_kernels_need_no_more_queries(tmp_path, shape: str, size: int) -> None:
    """Every hazard pair of the tile is settled by PR-3/PR-7 or not an obligation (PR-4): the
    solver decides x's and y's bounds and y's own pair, whatever the size."""
    result = _verify(tmp_path, shape, benchmark("scaling").KERNELS[shape](size))
    assert result.verdict is Verdict.proved
    solved = sorted(o.id for o in result.obligations if not o.discharged_by)
    assert len(solved) == 3 and all("x@" in i or "y@" in i for i in solved), solved


def _cut(tmp_path, phases: int) -> None:
    """The fence after phase k = phases // 2 removed: phase k + 1 reads phase k's buffer
    (RAW) and overwrites the buffer phase k read (WAR), both at its assignment's line."""
    k = phases // 2
    result = _verify(tmp_path, "ping_pong", benchmark("scaling")._ping_pong(phases, k))
    assert result.verdict is Verdict.refuted
    line = 17 + 3 * k  # 13 lines of prologue, 3 per phase, one fence fewer from phase k on
    dst, src = ("a", "b") if k % 2 else ("b", "a")
    assert {(f.kind.value, f.variable, f.loc.line) for f in result.findings} == \
        {("RAW", dst, line), ("WAR", src, line)}
    assert all(f.counterexample is not None and f.counterexample.replayed
               for f in result.findings)
    clear_cache()


@pytest.mark.rule("SEM-4.5")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_a_fence_removed_from_a_large_kernel_is_refuted(tmp_path) -> None:
    _cut(tmp_path, 100)


@pytest.mark.slow
@pytest.mark.rule("SEM-4.5")
def test_a_fence_removed_from_a_kernel_of_3000_statements_is_refuted(tmp_path) -> None:
    _cut(tmp_path, 1000)
