"""Where spork-verify's verdict departs from upstream's sync_check on purpose, the output says so
(specs/verification.md, "Decided departures from upstream"): the SMEM free after a
temporal-only fence (D3: proved here, upstream reports a WAW hazard) and the multicast ring
invariant (SEM-6.8: an all-gather refuted here, upstream finds no hazard), the free of an
endgame ring with an asynchronous arrive nobody waits for (DIAL-12, DIAL-20: refuted, upstream
checks no ring's free).
The kernels are in tests/programs, tests/programs_hopper and tests/programs_endgame, with their
expected verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.cli import main

ROOT = Path(__file__).resolve().parent
D3 = ROOT / "programs" / "d3_free_after_temporal.py"
FULL = ROOT / "programs" / "s16b_assign_after_temporal.py"
ALLGATHER = ROOT / "programs_hopper" / "s14g_allgather_self_guarded.py"
FIXED = ROOT / "programs_hopper" / "s14h_allgather_multicast_release.py"
CP_ASYNC_RING = ROOT / "programs_endgame" / "ring_cp_async_free_bug_unawaited.py"


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    code = main([str(a) for a in args] + ["--no-cache", "--no-progress", "--color", "never"])
    return code, capsys.readouterr().out


@pytest.mark.rule("SEM-4.7")
def test_free_after_a_temporal_fence_is_proved_and_v_says_upstream_differs(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, D3, "-v")
    assert code == 0 and "PROVED" in out, out
    lines = out.splitlines()
    (k,) = [i for i, line in enumerate(lines) if "SEM-4.7  WAW:s@" in line]
    assert lines[k + 1].strip().startswith("note: D3: a free needs only temporal visibility")
    assert "upstream's sync_check demands full visibility" in lines[k + 1]


@pytest.mark.rule("SEM-4.7")
def test_no_note_where_no_sync_grants_temporal_only(capsys: pytest.CaptureFixture[str]) -> None:
    # the note marks a free whose write the program could order only temporally: none in
    # smem_matmul (full fences only); s16b has a temporal-only fence (its free follows a full
    # one too, so the note says "can", never "does")
    code, out = run(capsys, ROOT.parent / "examples" / "smem_matmul.py", "-v")
    assert code == 0 and "note: D3" not in out, out
    code, out = run(capsys, FULL, "-v")
    assert code == 0 and "note: D3" in out


@pytest.mark.rule("SEM-6.8")
def test_self_guarded_all_gather_is_a_ring_overrun_that_says_why_it_is_stricter(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, ALLGATHER, "--format", "json")
    assert code == 1, out
    (result,) = json.loads(out)["results"]
    (finding,) = result["findings"]
    assert finding["kind"] == "ring-overrun" and finding["code"] == "ERR-V09"
    assert finding["variable"] == "bar" and finding["counterexample"]["replayed"]
    assert finding["counterexample"]["sizes"] == {"K": 2}
    assert "remote arrive of its own" in finding["message"]
    assert "stricter than upstream's sync_check" in finding["message"]


@pytest.mark.rule("SEM-6.8")
def test_all_gather_with_a_multicast_release_is_proved(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, FIXED)
    assert code == 0 and "PROVED" in out, out


@pytest.mark.rule("DIAL-12")
@pytest.mark.rule("DIAL-20")
def test_cp_async_ring_free_is_refuted_and_v_says_why_upstream_differs(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, CP_ASYNC_RING, "-v")
    assert code == 1 and "REFUTED" in out, out
    lines = out.splitlines()
    (k,) = [i for i, line in enumerate(lines) if "[ refuted] DIAL-20  WAR:bar" in line]
    note = lines[k + 1].strip()
    assert note.startswith("note: DIAL-12, DIAL-20: stricter than endgame's sync_check"), note
    assert "cp.async.mbarrier.arrive.noinc" in note and "mbarrier.init" in note
