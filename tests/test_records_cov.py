"""Shared coverage maps (records.Cov): records that share a `Cov` and grow it by memoised
transitions end up exactly as records that each own a fresh map (SEM-5.1, SEM-5.2, SEM-1.7)."""

from __future__ import annotations

import random

import pytest

from verifier.lang.stdlib.timelines import QualTL
from verifier.semantics import rules
from verifier.semantics.records import Covs, Group, Record, SyncCode
from verifier.semantics.threads import ALL, Threads

CODES = [SyncCode.of(sets) for sets in rules.SYNC_SETS.values()]


def _meets(d: dict, c: Threads) -> bool:
    return any(d.values()) if c.task is None else bool((d.get(c.task, 0) | d.get(None, 0)) & c.mask)


def _grow(m: dict, qv: int, c: Threads) -> None:
    d = m.setdefault(qv, {})
    d[c.task] = d.get(c.task, 0) | c.mask


def _held(m: dict) -> dict:
    """A map as what it grants: per (qual-tl, flag) the 𝔾-wide threads and, per task, those
    beyond them (entries that add nothing dropped). `Cov.joined` leaves out an entry
    that the 𝔾-wide one already holds, which the definitions' map spells out."""
    out = {}
    for qv, d in m.items():
        every = d.get(None, 0)
        held = {t: mask | every for t, mask in d.items()
                if t is not None and mask & ~every}
        if every:
            held[None] = every
        if held:
            out[qv] = held
    return out


class Model:
    """One record's coverage as a private map of its own, grown in place (the definitions)."""

    def __init__(self, m: dict, applied: frozenset) -> None:
        self.m = {qv: dict(d) for qv, d in m.items()}
        self.applied = set(applied)

    def witness(self, c: Threads, code: SyncCode, ordering: bool) -> bool:  # SEM-5.1
        qvs = list(code.witness_qvs)
        if ordering:
            qvs += [q * 4 + f for q in code.order_quals for f in (0, 1, 2)]
        return any(qv in self.m and _meets(self.m[qv], c) for qv in qvs)

    def augment(self, c: Threads, code: SyncCode) -> None:  # SEM-5.2
        key = (c.task, c.mask, id(code))
        if key not in self.applied:
            self.applied.add(key)
            for qv in code.augment_qvs:
                _grow(self.m, qv, c)

    def join(self, c: Threads, own: list[int]) -> None:  # SEM-1.7
        for qv in [qv for qv, d in self.m.items() if _meets(d, c)] + own:
            _grow(self.m, qv, c)


@pytest.mark.rule("SEM-5.1")
@pytest.mark.rule("SEM-5.2")
@pytest.mark.rule("SEM-1.7")
def test_shared_covs_grow_as_private_maps() -> None:
    """Records of few roots (so their `Cov`s and memos are shared) against a private map per
    record grown by the definitions, over random witness tests, augments and joins."""
    rng = random.Random(20)
    for trial in range(80):
        roots = Covs()
        recs: list[Record] = []
        models: list[Model] = []
        for _ in range(rng.randrange(2, 8)):
            atomic = frozenset(rng.sample(list(QualTL)[:3], rng.randrange(2)))
            rec = Record(Threads(rng.choice([0, 1]), rng.randrange(1, 1 << 6)),
                         rng.randrange(len(rules.Q)), rng.randrange(1, 16), rng.random() < 0.5,
                         roots.start(atomic), (), None, 0, Group(), rng.random() < 0.2)
            recs.append(rec)
            models.append(Model(rec.cov.m, rec.cov.applied))
        for _ in range(40):
            task = rng.choice([0, 1, None]) if rng.random() < 0.1 else rng.choice([0, 1])
            c = Threads(None, ALL) if task is None else Threads(task, rng.randrange(1 << 6))
            k, op, code = rng.randrange(len(recs)), rng.randrange(3), rng.choice(CODES)
            rec, model = recs[k], models[k]
            if op == 0:
                assert rec.cov.meets_witness(c, code, rec.ordering) == \
                    model.witness(c, code, rec.ordering)
            elif op == 1:
                rec.augment(c, code)
                model.augment(c, code)
            else:
                own = [rec.q * 4 + f for f in range(4) if rec.flags0 >> f & 1]
                inside = rec.threads.meets(c) if not rec.per_thread else \
                    (rec.threads.task is None or c.task is None or
                     (rec.threads.task == c.task and rec.threads.mask & c.mask))
                split, _ = rec.join(c)
                if split is not None:  # the split-off family: the old map, then its own part
                    twin = Model(model.m, frozenset(model.applied))
                    twin.join(c, own)
                    recs.append(split)
                    models.append(twin)
                    model.join(c, [])
                else:
                    model.join(c, own if inside else [])
            for r, mo in zip(recs, models):
                assert (_held(r.cov.m), r.cov.applied) == (_held(mo.m), mo.applied), \
                    (trial, op)
                probe = Threads(task, ALL if task is None else rng.randrange(1 << 6))
                assert r.cov.meets_witness(probe, code, r.ordering) == \
                    mo.witness(probe, code, r.ordering), (trial, op)


@pytest.mark.rule("SEM-5.2")
def test_a_shared_cov_is_copied_on_write() -> None:
    """Two records of one root: augmenting one leaves the other's coverage as it was; the
    second, augmented alike, reaches the very same `Cov` (computed once)."""
    roots = Covs()
    code = SyncCode.of(rules.KERNEL_SYNC)
    a, b = (Record(Threads(0, 1 << n), 0, 15, False, roots.empty, (), None, 0, Group())
            for n in range(2))
    c = Threads(0, 0b11)
    assert a.augment(c, code)
    assert a.cov is not roots.empty and roots.empty.m == {} and b.cov is roots.empty
    b.augment(c, code)
    assert b.cov is a.cov and a.augmented((0, 0b11, id(code)))
