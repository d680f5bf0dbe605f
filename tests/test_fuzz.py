"""Hostile inputs never crash the CLI (specs/cli.md, CLI-6): every file of tests/fuzz_corpus
and every hypothesis mutation of an example ends in exit 0..3 with no traceback — never exit 4
(internal error), never an escaping exception, never a hang (30 s a file on a quiet machine,
stretched by the load per core).

The generated files (examples bent by bytes, encodings, line ends, control characters, huge and
deep text, names, cuts and imports) run in one process through `fuzz_batch.py` — the CLI with
the file loaded in that process instead of a child per file — split in a few chunks, each
holding every family: the default run takes one, `-m slow` the others. The hand-written files (which exit, crash, hang or rewire the
interpreter) run one isolated CLI call each, as the CLI runs every file. `-m slow` also runs
every generated file through the real CLI, one loading child each."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.cli import main

from conftest import EXAMPLES
from process_support import stop_limit_s

CORPUS = Path(__file__).resolve().parent / "fuzz_corpus"
BATCH = Path(__file__).resolve().parent / "fuzz_batch.py"
FILES = sorted(p for p in CORPUS.glob("*.py") if p.name != "make_corpus.py")
GENERATED = [p for p in FILES if p.name.startswith("gen_")]
HAND = [p for p in FILES if p.name.startswith("hand_")]
FAMILIES = ("trunc", "flip", "num", "swap", "drop", "huge", "utf16", "badutf8", "nul", "bom",
            "enc", "eol", "ctl", "long", "deep", "name", "cut", "imp")
CHUNKS = 4
LIMIT_S = 30
SEED = (EXAMPLES / "saxpy.py").read_bytes()


def _verify(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(path), "--timeout", "2", "--load-timeout", f"{stop_limit_s(3.0):.1f}",
                     "--no-progress"])
    return code, out.getvalue() + err.getvalue()


def _assert_no_crash(path: Path) -> None:
    start = time.monotonic()
    code, text = _verify(path)
    assert "Traceback" not in text, text[-2000:]
    assert code in (0, 1, 2, 3), f"{path.name}: exit {code}\n{text[-2000:]}"
    if code == 2:  # a refusal says where and what
        assert str(path) in text or "no @proc found" in text, text[-2000:]
    assert time.monotonic() - start <= stop_limit_s(LIMIT_S), f"{path.name}: a hang"


def _chunk(k: int) -> list[Path]:
    """Every CHUNKS-th file of each family (`gen_FAMILY_...`), from its k-th: chunk 0 holds
    every family."""
    families = sorted({g.name.split("_")[1] for g in GENERATED})
    return [p for family in families
            for p in [g for g in GENERATED if g.name.split("_")[1] == family][k::CHUNKS]]


def test_corpus_is_large_enough() -> None:
    assert len(FILES) >= 400 and len(HAND) >= 60
    for family in FAMILIES:
        assert any(p.name.startswith(f"gen_{family}_") for p in _chunk(0)), family
    assert sorted(p for k in range(CHUNKS) for p in _chunk(k)) == GENERATED  # each file once


# .ci/run takes one chunk (a quarter of each family), `-m slow` the rest; the default run none
# (issue 20's time budget: the hand-written hostile files and the mutations stay in it)
@pytest.mark.parametrize("chunk", [pytest.param(0, marks=pytest.mark.extended),
                                   *(pytest.param(k, marks=pytest.mark.slow)
                                     for k in range(1, CHUNKS))])
def test_generated_files_never_crash(chunk: int, tmp_path: Path) -> None:
    """A quarter of the generated corpus through the CLI in one process: no traceback, no
    exit 4, a located refusal, at most 30 s a file (fuzz_batch.py)."""
    files = _chunk(chunk)
    results = tmp_path / "results.jsonl"
    subprocess.run([sys.executable, str(BATCH), str(results), *map(str, files)],
                   timeout=stop_limit_s(LIMIT_S) * len(files), check=True, capture_output=True)
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["file"] for r in rows] == [p.name for p in files]
    bad = [r for r in rows if r["traceback"] or r["code"] not in (0, 1, 2, 3) or
           r["code"] == 2 and not r["located"] or r["seconds"] > r["limit_s"]]
    assert not bad, "\n\n".join(f"{r['file']}: exit {r['code']} in {r['seconds']} s\n"
                                 f"{r['tail']}" for r in bad)


# the default run: every sixth hand-written file; .ci/run every one
@pytest.mark.parametrize("path", [pytest.param(p, marks=[] if k % 6 == 0 else [pytest.mark.extended])
                                  for k, p in enumerate(HAND)], ids=lambda p: p.name)
def test_hostile_file_never_crashes(path: Path) -> None:
    _assert_no_crash(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", GENERATED, ids=lambda p: p.name)
def test_hostile_file_never_crashes_full_corpus(path: Path) -> None:
    """Every generated file through the real CLI, its own loading child each."""
    _assert_no_crash(path)


_edits = st.lists(st.tuples(st.integers(0, len(SEED) - 1), st.binary(min_size=0, max_size=4)),
                  min_size=1, max_size=4)


def _mutate(edits: list[tuple[int, bytes]], cut: int | None) -> bytes:
    data = bytearray(SEED)
    for at, new in edits:  # replace one byte by 0..4 bytes (delete, flip, insert)
        at = min(at, len(data) - 1)
        data[at:at + 1] = new
    return bytes(data[:cut] if cut is not None else data)


def _run_mutation(tmp: Path, edits: list[tuple[int, bytes]], cut: int | None) -> None:
    path = tmp / "mutant.py"
    path.write_bytes(_mutate(edits, cut))
    _assert_no_crash(path)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=_edits, cut=st.none() | st.integers(0, len(SEED)))
def test_mutated_example_never_crashes(tmp_path: Path, edits: list[tuple[int, bytes]],
                                       cut: int | None) -> None:
    _run_mutation(tmp_path, edits, cut)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=_edits, cut=st.none() | st.integers(0, len(SEED)))
def test_mutated_example_never_crashes_long(tmp_path: Path, edits: list[tuple[int, bytes]],
                                            cut: int | None) -> None:
    _run_mutation(tmp_path, edits, cut)
