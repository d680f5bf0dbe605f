"""Differential: the symbolic verdict at a fixed size equals the concrete machine's verdict,
for every bundled kernel and seeded-bug variant, at three small sizes (architecture.md §3)."""

from __future__ import annotations

import pytest

from verifier.encode import Options, concrete_verdict, verify_proc
from verifier.results import Verdict

from conftest import case_params, expectations, kernel_files, load_one
from sizes import sample_sizes

CASES = [e for f in kernel_files() for e in expectations(f) if e.verdict in ("proved", "refuted")]


@pytest.mark.parametrize("exp", case_params(CASES, differential=True))
def test_symbolic_equals_concrete_at_fixed_sizes(exp) -> None:  # type: ignore[no-untyped-def]
    proc = load_one(exp.file, exp.proc)
    all_sizes = sample_sizes(proc, count=3, bound=32)
    assert all_sizes, "the asserts admit no small size"
    for sizes in all_sizes:
        concrete, _ = concrete_verdict(proc, sizes)
        symbolic = verify_proc(proc, Options(fixed_sizes=sizes)).verdict
        assert symbolic is not Verdict.unknown, f"unknown at {sizes}"
        # the machine never says `proved` of one size: its `no-hazard-at-sizes` is a
        # fixed-size proof's `proved` (specs/verification.md, --sizes)
        same = Verdict.proved if concrete is Verdict.no_hazard_at_sizes else concrete
        assert symbolic == same, f"at {sizes}: symbolic {symbolic}, concrete {concrete}"
