"""Cohorts of records (Choice M15, specs/verification.md): records that no sync can tell apart
share one sync state, and the syncs visit cohorts instead of records. A wrong merge would give
some record another's coverage or tags; these tests pin what may be merged, that a family
split splits every member alike, and that the whole machine reports exactly the findings of
one cohort per record (no merging: the machine before M15) on every seeded bug."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES, case_params, expectations, kernel_files, load_one
from sizes import sample_sizes
from verifier.semantics import rules
from verifier.semantics.fast import FastMachine
from verifier.semantics.machine import Machine, run_reference
from verifier.semantics.records import Cohort, Group, Record, SyncCode
from verifier.semantics.run import run_machine
from verifier.semantics.threads import Threads

CASES = [e for f in kernel_files() for e in expectations(f) if e.verdict == "refuted"]
FULL = SyncCode.of(rules.KERNEL_SYNC)


def findings(proc, sizes, collect_all=True, machine=Machine):  # type: ignore[no-untyped-def]
    if machine is Machine:
        holds, found = run_reference(proc, sizes, collect_all=collect_all)
    else:
        holds, found = run_machine(proc, sizes)
    return holds, [(f.kind, f.message, f.variable, f.index, f.loc, f.lacking,
                    f.later and f.later.threads, f.earlier and f.earlier.threads,
                    f.earlier and f.earlier.loc, f.sync_hint)
                   for f in found]


@pytest.mark.rule("SEM-5.3")
@pytest.mark.rule("SEM-6.3")
@pytest.mark.rule("SEM-1.7")
@pytest.mark.parametrize("exp", case_params(CASES, differential=True, sample=("refuted",),
                                            by_kind=False))
def test_cohorts_are_unobservable(exp, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every seeded bug: the collect-all reference run and the first-error run report the
    same findings (kind, element, threads, both statements) with records merged into cohorts
    as without (every record alone in its cohort)."""
    proc = load_one(exp.file, exp.proc)
    (sizes,) = sample_sizes(proc, count=1, bound=32)
    merged = findings(proc, sizes), findings(proc, sizes, False, FastMachine)
    monkeypatch.setattr(Cohort, "alike", lambda *_: False)
    assert (findings(proc, sizes), findings(proc, sizes, False, FastMachine)) == merged, sizes


def _machine() -> Machine:
    proc = load_one(EXAMPLES / "smem_matmul.py", "smem_matmul")
    return Machine(proc, {"M": 16, "N": 16, "K": 16})


def _new(m: Machine, threads: Threads, *, q: int = 1, flags0: int = 15,
         per_thread: bool = False, tags: frozenset = frozenset(), ordering: bool = False,
         origin: object = None) -> Record:
    group = Group()
    m.record(threads.task, threads, q, flags0, per_thread, m.covs.empty, tags, origin, 0,
             group, ordering)
    return group.records[-1]


@pytest.mark.rule("SEM-2.4")
def test_only_alike_records_share_a_cohort() -> None:
    """Equal threads, qual-tl, flags, family, ordering, coverage and pending tags: one cohort;
    any one of them different: another."""
    m = _machine()
    t = Threads(0, 0b1111)
    a, b = _new(m, t), _new(m, t)
    assert a.co is b.co and a.co.live == 2
    others = [_new(m, Threads(0, 0b0111)), _new(m, Threads(1, 0b1111)), _new(m, t, q=2),
              _new(m, t, flags0=1), _new(m, t, per_thread=True), _new(m, t, ordering=True),
              _new(m, t, tags=frozenset({(7, (0,), 0)}))]
    assert all(r.co is not a.co for r in others)
    assert len({id(r.co) for r in others}) == len(others)
    tagged = _new(m, t, tags=frozenset({(7, (0,), 0)}))
    assert tagged.co is others[-1].co  # the same tags: alike
    other_number = _new(m, t, tags=frozenset({(7, (0,), 1)}))
    assert other_number.co is not tagged.co  # P differs in the arrive number (SEM-6.4)


@pytest.mark.rule("SEM-5.2")
@pytest.mark.rule("SEM-6.3")
def test_a_cohort_changed_by_a_sync_takes_no_new_record() -> None:
    """After an augment (coverage) or an Arrive (tags) the cohort differs from a record just
    made, which starts a cohort of its own; so does one whose records all died."""
    m = _machine()
    t = Threads(0, 0b11)
    a = _new(m, t)
    a.co.augment(Threads(0, 0b11), FULL)
    b = _new(m, t)
    assert b.co is not a.co and b.co.cov is m.covs.empty
    b.co.tag([(3, (0,), 0)])
    c = _new(m, t)
    assert c.co is not b.co and c.co.pending == {}
    c.co.live = 0  # as a collection leaves a cohort none of whose records is held
    assert _new(m, t).co is not c.co


@pytest.mark.rule("SEM-4.4")
def test_a_split_cohort_takes_no_record_of_its_old_threads() -> None:
    """A family split shrinks the open cohort's threads (coverage and tags unchanged): a
    record made afterwards by the whole family is not alike."""
    m = _machine()
    family = Threads(0, 0b1111)
    a = _new(m, family, per_thread=True)
    m.witnessed_part(a.co, Threads(0, 0b0001), FULL)
    assert a.threads == Threads(0, 0b1110)
    b = _new(m, family, per_thread=True)
    assert b.co is not a.co and b.threads == family


@pytest.mark.rule("SEM-4.4")
@pytest.mark.rule("SEM-5.1")
def test_a_family_split_splits_every_member() -> None:
    """Two per-thread families in one cohort: a sync witnessing some threads of the family
    splits both, each part a record of its own group with its own origin."""
    m = _machine()
    family = Threads(0, 0b1111)
    a = _new(m, family, per_thread=True, origin="a")
    b = _new(m, family, per_thread=True, origin="b")
    assert a.co is b.co
    part = Threads(0, 0b0011)
    target = m.witnessed_part(a.co, part, FULL)
    assert target is not None and target is not a.co
    assert target.threads == part and a.threads == Threads(0, 0b1100)
    splits = [g.records[-1] for g in (a.group, b.group)]
    assert [r.origin for r in splits] == ["a", "b"] and all(r.co is target for r in splits)
    assert [len(g.records) for g in (a.group, b.group)] == [2, 2]
    target.augment(part, FULL)
    assert a.co.cov is m.covs.empty and all(r.cov is target.cov for r in splits)


@pytest.mark.rule("SEM-1.7")
def test_a_join_leaves_a_map_all_of_c_holds() -> None:
    """JoinThreads(C) of another task over an atomic record (its atom flag held by every
    thread) changes nothing: the same map, no new one per task (Cov.reaches)."""
    m = _machine()
    from verifier.lang.stdlib.timelines import QualTL
    atomic = m.covs.start(frozenset({QualTL.cuda2}))
    rec = Record(Threads(0, 0b1), 1, 15, False, atomic, (), None, 1, Group())
    for task in (1, 2, 3):
        split, keys = rec.co.join(Threads(task, 0b11))
        assert split is None and keys == [] and rec.cov is atomic
