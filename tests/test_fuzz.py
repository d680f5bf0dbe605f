"""Hostile inputs never crash the CLI (specs/cli.md, CLI-6): every file of tests/fuzz_corpus
and every hypothesis mutation of an example ends in exit 0..3 with no traceback — never exit 4
(internal error) and never an escaping exception. The default run takes the hand-written files
and every third generated one; `-m slow` runs them all."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.cli import main

from conftest import EXAMPLES

CORPUS = Path(__file__).resolve().parent / "fuzz_corpus"
FILES = sorted(p for p in CORPUS.glob("*.py") if p.name != "make_corpus.py")
GENERATED = [p for p in FILES if p.name.startswith("gen_")]
HAND = [p for p in FILES if p.name.startswith("hand_")]
DEFAULT = HAND + GENERATED[::3]
SEED = (EXAMPLES / "saxpy.py").read_bytes()


def _verify(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(path), "--timeout", "2", "--load-timeout", "3", "--no-progress"])
    return code, out.getvalue() + err.getvalue()


def _assert_no_crash(path: Path) -> None:
    code, text = _verify(path)
    assert "Traceback" not in text, text[-2000:]
    assert code in (0, 1, 2, 3), f"{path.name}: exit {code}\n{text[-2000:]}"
    if code == 2:  # a refusal says where and what
        assert str(path) in text or "no @proc found" in text, text[-2000:]


def test_corpus_is_large_enough() -> None:
    assert len(FILES) >= 150 and len(HAND) >= 50


@pytest.mark.parametrize("path", DEFAULT, ids=lambda p: p.name)
def test_hostile_file_never_crashes(path: Path) -> None:
    _assert_no_crash(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in GENERATED if p not in DEFAULT], ids=lambda p: p.name)
def test_hostile_file_never_crashes_full_corpus(path: Path) -> None:
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
