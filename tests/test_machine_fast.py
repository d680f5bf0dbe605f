"""The batched machine (semantics/fast.py) against the reference machine (semantics/machine.py):
on every bundled kernel and seeded bug (.ci/run; the default run: one per folder and
verdict), at one small size (three under `-m slow`), the batched
run is clean exactly when the reference run finds no error, and `run_machine` returns the
reference's result either way (issue 20; SEM-2.6, SEM-4.4, SEM-4.5 decided per element over
whole regions)."""

from __future__ import annotations

import random

import pytest

from conftest import (EXAMPLES, ROOT, Expectation, case_params, expectations, kernel_files,
                      load_one)
from sizes import sample_sizes
from verifier.semantics import run_machine
from verifier.semantics.fast import Diverge, FastMachine
from verifier.semantics.machine import run_reference
from verifier.semantics.records import ALL, Group, Record, passes
from verifier.semantics.threads import Threads

VERDICTS = ("proved", "refuted")
CASES = [e for f in kernel_files() for e in expectations(f) if e.verdict in VERDICTS]


def outcome(run) -> tuple[str, object]:  # type: ignore[no-untyped-def]
    try:
        return "ran", run()
    except Diverge:
        return "diverged", None
    except Exception as e:  # noqa: BLE001 - compared between the two machines
        return "raised", type(e).__name__


def check_batched_machine_decides_as_the_reference(exp: Expectation, count: int) -> None:
    """At `count` small sizes the batched machine, the reference machine and `run_machine`
    give the same outcome."""
    proc = load_one(exp.file, exp.proc)
    for sizes in sample_sizes(proc, count=count, bound=32):
        ref = outcome(lambda: run_reference(proc, sizes))
        fast = outcome(lambda: run_reference(proc, sizes, machine=FastMachine))
        if ref[0] == "raised":
            assert fast[0] != "ran", (sizes, ref)
        elif ref[1][1]:  # type: ignore[index]
            assert fast[0] == "diverged", (sizes, ref[1][1][0].message)  # type: ignore[index]
        else:
            assert fast == ref, sizes
        assert outcome(lambda: run_machine(proc, sizes)) == ref


@pytest.mark.rule("SEM-4.5")
@pytest.mark.parametrize("exp", case_params(CASES, differential=True, sample=VERDICTS, by_kind=False))
def test_batched_machine_decides_as_the_reference(exp: Expectation) -> None:
    check_batched_machine_decides_as_the_reference(exp, count=1)


@pytest.mark.slow  # .ci/run runs it (`-m slow`): the same at three sizes
@pytest.mark.rule("SEM-4.5")
@pytest.mark.parametrize("exp", case_params(CASES, differential=True))
def test_batched_machine_decides_as_the_reference_at_three_sizes(exp: Expectation) -> None:
    check_batched_machine_decides_as_the_reference(exp, count=3)


def test_batched_machine_batches_the_examples() -> None:
    """The batched path is taken (not only its fallback): the tiled matmul's loads and
    products are regions."""
    proc = load_one(EXAMPLES / "smem_matmul.py", "smem_matmul")
    m = FastMachine(proc, {"M": 32, "N": 32, "K": 32})
    assert m.preconditions_hold() and m.run() == [] and m.batched > 0


@pytest.mark.rule("SEM-4.5")
def test_passing_agrees_with_lacking() -> None:
    """Record.passing (every single-thread collective at once) is Record.lacking thread by
    thread, on random records and checks."""
    rng = random.Random(20)

    def mask() -> int:
        return rng.randrange(1 << 6)

    for _ in range(4000):
        task = rng.choice([0, 1])
        owner = rng.choice([None, 0, 1])
        cov = {qv: {rng.choice([None, 0, 1]): ALL if rng.random() < 0.1 else mask()}
               for qv in range(8) if rng.random() < 0.3}
        rec = Record(Threads(owner, ALL if owner is None else mask()), rng.randrange(2),
                     rng.randrange(16), rng.random() < 0.5, cov, set(), None, 0, Group())
        quals = tuple(sorted(rng.sample([0, 1], rng.randrange(1, 3))))
        qbits = sum(1 << q for q in quals) if rng.random() < 0.8 else rng.randrange(4)
        f, conv = rng.randrange(2), rng.random() < 0.5
        got = rec.passing(task, quals, qbits, f, conv)
        for n in range(6):
            alone = rec.lacking(Threads(task, 1 << n), quals, qbits, f, conv) is None
            assert alone == bool(got >> n & 1)


@pytest.mark.rule("SEM-4.5")
def test_terms_agree_with_lacking() -> None:
    """Record.terms (a check as masks, for every collective at once) is Record.lacking on
    random records, checks and collectives of one or several threads."""
    rng = random.Random(21)
    for _ in range(4000):
        task = rng.choice([0, 1])
        owner = rng.choice([None, 0, 1])
        cov = {qv: {rng.choice([None, 0, 1]): ALL if rng.random() < 0.1 else rng.randrange(64)}
               for qv in range(8) if rng.random() < 0.3}
        rec = Record(Threads(owner, ALL if owner is None else rng.randrange(64)),
                     rng.randrange(2), rng.randrange(16), rng.random() < 0.5, cov, set(), None,
                     0, Group())
        quals = tuple(sorted(rng.sample([0, 1], rng.randrange(1, 3))))
        qbits = sum(1 << q for q in quals) if rng.random() < 0.8 else rng.randrange(4)
        f, conv = rng.randrange(2), rng.random() < 0.5
        terms = rec.terms(task, quals, qbits, f, conv)
        for c in range(1, 64):
            assert passes(terms, c) == (rec.lacking(Threads(task, c), quals, qbits, f, conv)
                                        is None)


@pytest.mark.rule("SEM-4.5")
def test_hazard_inside_a_region_is_reported_by_the_reference() -> None:
    """Two threads of one sync-free cuda_threads loop store to s[t / 2]: the batched check of
    the region finds it (no sync in between), and the report is the reference machine's."""
    proc = load_one(ROOT / "tests" / "programs" / "smem_waw_collision.py", "smem_waw_collision")
    with pytest.raises(Diverge):
        run_reference(proc, {"nb": 1}, machine=FastMachine)
    holds, found = run_machine(proc, {"nb": 1})
    assert holds and found == run_reference(proc, {"nb": 1})[1]
    assert (found[0].kind, found[0].variable, found[0].loc.line) == ("WAW", "s", 13)


@pytest.mark.rule("SEM-4.4")
@pytest.mark.parametrize("name", ["gemm_sm80_ws", "gemm_sm80_bug_lag", "ws_ring_bug_consumer_lag"])
def test_skipped_neutral_splits_decide_alike(name: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An Arrive whose tags a record already holds changes nothing in it but may split its
    family into alike parts; the batched machine skips such records (`exact_families`). Run
    both ways at small sizes, the outcome is the same, and the skip is taken (fewer records
    reach `witnessed_part`)."""
    proc = load_one(EXAMPLES / f"{name}.py", name)
    calls = {True: 0, False: 0}
    for exact in (True, False):
        monkeypatch.setattr(FastMachine, "exact_families", exact)
        real = FastMachine.witnessed_part

        def counted(self, *args, _exact=exact, _real=real):  # type: ignore[no-untyped-def]
            calls[_exact] += 1
            return _real(self, *args)
        monkeypatch.setattr(FastMachine, "witnessed_part", counted)
        outcomes = [outcome(lambda: run_reference(proc, sizes, machine=FastMachine))
                    for sizes in sample_sizes(proc, count=2, bound=32)]
        monkeypatch.setattr(FastMachine, "witnessed_part", real)
        if exact:
            want = outcomes
    assert outcomes == want
    assert calls[False] < calls[True]
