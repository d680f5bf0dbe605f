"""The batched machine (semantics/fast.py) against the reference machine (semantics/machine.py):
on every bundled kernel and seeded bug (.ci/run; the default run: one per folder and
verdict), at one small size (three under `-m slow`), the batched
run is clean exactly when the reference run finds no error, and `run_machine` returns the
reference's result either way (issue 20; SEM-2.6, SEM-4.4, SEM-4.5 decided per element over
whole regions). Both ways of running a region are held to it: on cells (Choice M14, the
default) and on elements (`cells.CELLS = False`)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from conftest import (EXAMPLES, ROOT, Expectation, case_params, expectations, kernel_files,
                      load_one)
from sizes import sample_sizes
from verifier.semantics import cells, run_machine
from verifier.semantics.batch import LocalBuf, Site
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
@pytest.mark.parametrize("on_cells", [True, False], ids=["cells", "elements"])
@pytest.mark.parametrize("exp", case_params(CASES, differential=True, sample=VERDICTS, by_kind=False))
def test_batched_machine_decides_as_the_reference(exp: Expectation, on_cells: bool,
                                                  monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(cells, "CELLS", on_cells)
    check_batched_machine_decides_as_the_reference(exp, count=1)


@pytest.mark.slow  # .ci/run runs it (`-m slow`): the same at three sizes
@pytest.mark.rule("SEM-4.5")
@pytest.mark.parametrize("on_cells", [True, False], ids=["cells", "elements"])
@pytest.mark.parametrize("exp", case_params(CASES, differential=True))
def test_batched_machine_decides_as_the_reference_at_three_sizes(
        exp: Expectation, on_cells: bool, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(cells, "CELLS", on_cells)
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


CELL_PROGRAMS = ROOT / "tests" / "programs"


def grids_made(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    """Counts the cell grids `apply_region` uses (a list, one entry per grid: its cells)."""
    made: list[int] = []
    real = cells.compress

    def counted(buf, sites):  # type: ignore[no-untyped-def]
        got = real(buf, sites)
        if got is not None:
            made.append(int(got[0].cells.ids.size) if hasattr(got[0].cells, "ids") else 0)
        return got
    monkeypatch.setattr("verifier.semantics.batch_apply.compress", counted)
    return made


@pytest.mark.rule("SEM-4.5", "SEM-2.6")
@pytest.mark.parametrize("name", ["cells_chunk_tile", "cells_l_shape"])
def test_regions_on_cells_prove_tiles_of_mixed_histories(name: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A whole-tile fragment load in a region over a tile whose chunks (or an L inside it)
    hold other histories: clean on cells, as on elements, and the cell path is taken with
    fewer cells than the tile's 128 elements."""
    proc = load_one(CELL_PROGRAMS / f"{name}.py", name)
    made = grids_made(monkeypatch)
    for sizes in ({"n": 1}, {"n": 3}):
        assert run_reference(proc, sizes, machine=FastMachine)[1] == []
    assert made and 0 < min(n for n in made if n) < 128
    monkeypatch.setattr(cells, "CELLS", False)
    assert run_reference(proc, {"n": 3}, machine=FastMachine)[1] == []


@pytest.mark.rule("SEM-4.5")
@pytest.mark.parametrize("name", ["cells_chunk_tile_bug", "cells_l_shape_bug"])
def test_regions_on_cells_find_hazards_inside_a_tile(name: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The seeded bugs (a missing fence before the whole-tile load; an unpublished L inside
    the tile) make the batched run diverge on cells and on elements, and `run_machine`
    reports the reference's RAW at the load's line."""
    path = CELL_PROGRAMS / f"{name}.py"
    exp = expectations(path)[0]
    proc = load_one(path, name)
    made = grids_made(monkeypatch)
    for on_cells in (True, False):
        monkeypatch.setattr(cells, "CELLS", on_cells)
        with pytest.raises(Diverge):
            run_reference(proc, {"n": 2}, machine=FastMachine)
    assert made
    holds, found = run_machine(proc, {"n": 2})
    assert holds and (found[0].kind, found[0].variable, found[0].loc.line) == \
        (exp.kind, exp.variable, exp.line)


def _uniform_cells(rng: random.Random, shape: tuple[int, ...], local: bool) -> None:
    """One random buffer (histories painted as random boxes) and random access boxes."""
    from verifier.semantics.histories import BufInstance

    def box() -> tuple[list[int], list[int]]:
        lo = [rng.randrange(n) for n in shape]
        return lo, [a + rng.randrange(1, n - a + 1) for a, n in zip(lo, shape)]

    sym = type("S", (), {"name": "x"})()
    if local:
        buf: object = LocalBuf(sym, shape, None, True, 4)  # type: ignore[arg-type]
    else:
        buf = BufInstance(sym, shape, None, True)  # type: ignore[arg-type]
        for _ in range(rng.randrange(4)):
            lo, hi = box()
            buf.ids[tuple(slice(a, b) for a, b in zip(lo, hi))] = rng.randrange(1, 5)
    sites = []
    for _ in range(rng.randrange(1, 4)):
        rows = [box() for _ in range(rng.randrange(1, 4))]
        lo = [np.array([r[0][d] for r in rows], dtype=np.int64) for d in range(len(shape))]
        hi = [np.array([r[1][d] for r in rows], dtype=np.int64) for d in range(len(shape))]
        z = np.zeros(len(rows), dtype=np.int64)
        sites.append(Site(buf, None, None, False, None, lo, hi, z, z, z if local else None))
    got = cells.compress(buf, sites)
    if got is None:
        return
    grid, moved = got
    low = [s.start for s in grid.box]
    edges = [np.concatenate([[0], np.cumsum(span)]) + a for span, a in zip(grid.spans, low)]
    for cell in np.ndindex(*grid.cells.shape):
        elems = [range(e[c], e[c + 1]) for e, c in zip(edges, cell)]
        members = list(np.ndindex(*(len(r) for r in elems)))
        coords = [tuple(r[k] for r, k in zip(elems, m)) for m in members]
        for site, cell_site in zip(sites, moved):  # the same boxes hold every element
            for row in range(len(site.pos)):
                inside = {all(site.lo[d][row] <= x[d] < site.hi[d][row] for d in range(len(shape)))
                          for x in coords}
                assert len(inside) == 1
                in_cell = all(cell_site.lo[d][row] <= cell[d] < cell_site.hi[d][row]
                              for d in range(len(shape)))
                assert inside == {in_cell}
        if not local:  # one old history per cell, the cell's own
            assert {int(buf.ids[x]) for x in coords} == {int(grid.cells.ids[cell])}
    if not local:
        before = buf.ids.copy()
        grid.write_back()  # unchanged cells give back the same elements
        assert (buf.ids == before).all()


@pytest.mark.rule("SEM-4.5", "SEM-2.6")
def test_cells_hold_one_history_and_the_same_boxes() -> None:
    """Choice M14's claim on random buffers: every element of a cell has the cell's old
    history and lies in exactly the access boxes the cell lies in (compressed boxes)."""
    rng = random.Random(14)
    for _ in range(300):
        shape = tuple(rng.randrange(1, 9) for _ in range(rng.randrange(1, 4)))
        _uniform_cells(rng, shape, local=rng.random() < 0.2)


@pytest.mark.rule("SEM-4.5")
def test_a_loop_too_small_to_batch_is_enumerated_again_only_now_and_then(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """cells_l_shape's L loop (37 loop instances, under MIN_ROWS) and its inner loops run once
    per task: after an enumeration finds one small it runs statement by statement for RETRY
    visits, so 40 tasks enumerate each 3 times; the batched loops are enumerated on every
    visit, and the run stays clean."""
    from verifier.semantics import fast
    from verifier.semantics.batch import Enumerator

    proc = load_one(CELL_PROGRAMS / "cells_l_shape.py", "cells_l_shape")
    seen: dict[int, int] = {}
    real = Enumerator.run

    def counted(self, s):  # type: ignore[no-untyped-def]
        seen[s.loc.line] = seen.get(s.loc.line, 0) + 1
        return real(self, s)
    monkeypatch.setattr(Enumerator, "run", counted)
    assert run_reference(proc, {"n": 40}, machine=FastMachine)[1] == []
    assert fast.RETRY == 15 and seen[21] == seen[23] == seen[25] == 3  # visits 1, 17, 33
    assert seen[15] == seen[28] == 40  # the batched loops: every visit
