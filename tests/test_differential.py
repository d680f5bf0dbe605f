"""Differential: the symbolic verdict at a fixed size equals the concrete machine's verdict,
for every bundled kernel and seeded-bug variant (.ci/run), at one small size, and at three with
`-m slow` (architecture.md §3). The default run checks one kernel per folder and verdict
(`conftest.representatives`)."""

from __future__ import annotations

import pytest

from conftest import case_params, expectations, kernel_files, load_one
from sizes import check_symbolic_equals_concrete

VERDICTS = ("proved", "refuted")
CASES = [e for f in kernel_files() for e in expectations(f) if e.verdict in VERDICTS]


@pytest.mark.parametrize("exp", case_params(CASES, differential=True, sample=VERDICTS, by_kind=False))
def test_symbolic_equals_concrete_at_a_fixed_size(exp) -> None:  # type: ignore[no-untyped-def]
    """The default run: the first small size (each size costs a proof and a machine run)."""
    check_symbolic_equals_concrete(load_one(exp.file, exp.proc), count=1, bound=32)


@pytest.mark.slow  # .ci/run runs it (`-m slow`): the same at three sizes
@pytest.mark.parametrize("exp", case_params(CASES, differential=True))
def test_symbolic_equals_concrete_at_fixed_sizes(exp) -> None:  # type: ignore[no-untyped-def]
    check_symbolic_equals_concrete(load_one(exp.file, exp.proc), count=3, bound=32)
