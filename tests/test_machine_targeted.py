"""Targeted replay (Choice M8 of specs/verification.md): a collect-all machine run that keeps
the histories of one variable reports exactly the errors a whole collect-all run reports on
that variable. One small seeded-bug kernel per error kind (the default run stays short)."""

from __future__ import annotations

import pytest

from verifier.semantics import run_machine

from conftest import expectations, kernel_files, load_one
from sizes import sample_sizes

_SLOW = ("gemm", "smem_matmul")  # whole runs of seconds each: covered by test_differential
_REFUTED = [e for f in kernel_files() for e in expectations(f)
            if e.verdict == "refuted" and not e.slow_differential
            and not e.file.stem.startswith(_SLOW)]
KINDS = sorted({e.kind for e in _REFUTED if e.kind})


def _seen(kind: str):  # type: ignore[no-untyped-def]
    """The first case of this kind, with sampled sizes, at which a whole collect-all run
    reports an error (some bugs need particular sizes: the next case is tried)."""
    for exp in [e for e in _REFUTED if e.kind == kind][:3]:
        proc = load_one(exp.file, exp.proc)
        for sizes in sample_sizes(proc, count=5, bound=32):
            holds, whole = run_machine(proc, sizes, collect_all=True)
            if holds and whole:
                return proc, sizes, whole
    raise AssertionError(f"no {kind} seeded bug is seen at the sampled sizes")


def _key(f) -> tuple:  # type: ignore[no-untyped-def]
    return (f.kind, f.variable, f.index, f.loc, f.message, f.lacking, f.later, f.earlier)


@pytest.mark.parametrize("kind", KINDS)
def test_targeted_run_equals_whole_run_on_each_variable(kind: str) -> None:
    proc, sizes, whole = _seen(kind)
    for name in sorted({f.variable for f in whole if f.variable is not None}):
        _, targeted = run_machine(proc, sizes, collect_all=True, only=frozenset({name}))
        on_var = [_key(f) for f in whole if f.variable == name]
        assert [_key(f) for f in targeted if f.variable == name] == on_var, name
        others = [_key(f) for f in targeted if f.variable != name]
        assert set(others) <= {_key(f) for f in whole}, "a targeted run invented an error"


def test_first_error_runs_are_never_targeted() -> None:
    exp = _REFUTED[0]
    proc = load_one(exp.file, exp.proc)
    (sizes,) = sample_sizes(proc, count=1, bound=32)
    with pytest.raises(AssertionError):
        run_machine(proc, sizes, only=frozenset({"x"}))
