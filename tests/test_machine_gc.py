"""The machine's garbage collection is unobservable (SEM-2.6: a record no element's history
holds is never checked again): collecting at every sync, with or without renumbering the
history table, and pruning the indexes every time, reports exactly the findings of the default
schedule (issue 20: collections read only what changed, histories.py; pruning is amortised,
index.py). On every seeded bug in .ci/run, one per kernel folder by default."""

from __future__ import annotations

import pytest

from conftest import case_params, expectations, kernel_files, load_one
from sizes import sample_sizes
from verifier.semantics import histories, index
from verifier.semantics.machine import run_reference
from verifier.semantics.records import Record
from verifier.semantics.threads import Threads

CASES = [e for f in kernel_files() for e in expectations(f) if e.verdict == "refuted"]


def findings(proc, sizes):  # type: ignore[no-untyped-def]
    holds, found = run_reference(proc, sizes, collect_all=True)
    return holds, [(f.kind, f.message, f.variable, f.index, f.loc, f.lacking,
                    f.later and f.later.threads, f.earlier and f.earlier.threads)
                   for f in found]


@pytest.mark.rule("SEM-2.6")
@pytest.mark.parametrize("exp", case_params(CASES, differential=True, sample=("refuted",),
                                            by_kind=False))
def test_collection_schedule_is_unobservable(exp, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    proc = load_one(exp.file, exp.proc)
    (sizes,) = sample_sizes(proc, count=1, bound=32)
    default = findings(proc, sizes)
    monkeypatch.setattr(histories, "STALE_GROUPS", 0)  # collect at every fence
    monkeypatch.setattr(index, "PRUNE_ENTRIES", -1)  # prune at every collection
    for compact in (1 << 40, 0):  # ids never renumbered; renumbered at every collection
        monkeypatch.setattr(histories, "COMPACT_IDS", compact)
        assert findings(proc, sizes) == default, (sizes, compact)


def test_collection_frees_what_no_element_names() -> None:
    """A buffer's ids are read exactly when its writes since the last collection outgrow what
    it named then; either way every id an element holds stays (a superset, never fewer)."""
    table = histories.HistoryTable()
    buf = histories.BufInstance(None, (8,), None, True)  # type: ignore[arg-type]
    groups = []
    for k in range(8):
        g = histories.Group()
        Record(Threads(0, 1), 0, 15, False, {}, (), None, 0, g)
        table.groups.append(g)
        groups.append(g)
        buf.ids[k] = table.add((), (g,))
    table.collect([buf])
    assert all(g.alive for g in groups)
    for k in range(4):  # overwrite half: their old histories die at an exact read
        g = histories.Group()
        table.groups.append(g)
        h = table.add((), (g,))
        buf.ids[k] = h
        buf.wrote([h])
    for _ in range(2):
        table.collect([buf])
        named = set(buf.ids.tolist())
        assert all(table.histories[h] is not None for h in named)
    buf.named = None  # the next collection reads the buffer
    table.collect([buf])
    assert [g.alive for g in groups] == [False] * 4 + [True] * 4
