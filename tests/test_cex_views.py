"""A refuted race as a per-thread table (`--cex-table`, also under -v) and as an SVG picture
(`--cex-svg DIR`): the two threads' lanes, the two accesses, the sync statements that ran between
them and the missing edge."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import EXAMPLES

from verifier.cli import main
from verifier.diagnostics import SrcLoc
from verifier.report.cex_svg import svg
from verifier.report.cex_view import table_lines, view
from verifier.results import Counterexample, Finding, FindingKind, Related

SVG = "{http://www.w3.org/2000/svg}"


def race(kind: FindingKind = FindingKind.RAW) -> Finding:
    """A finding as the CLI reports block_reduce_bug_warpfence.py (written by hand)."""
    file = str(EXAMPLES / "block_reduce_bug_warpfence.py")
    cex = Counterexample({"nb": 1}, {"earlier.t": 64, "later.t": 0},
                         ["earlier: task 0, thread 64", "later: task 0, thread 0"], [64], True)
    related = (Related(SrcLoc(file, 17, 17), "earlier access"),
               Related(SrcLoc(file, 21, 25), "later access"),
               Related(SrcLoc(file, 18, 13), "missing sync"),
               Related(SrcLoc(file, 19, 17), "sync between"))
    return Finding(kind, "RAW HAZARD @ s[64]", "s", SrcLoc(file, 21, 25), related, cex,
                   "SEM-4.5", "ERR-V01")


def test_table_has_a_lane_per_thread_and_events_in_trace_order() -> None:
    lines = table_lines(race())
    header = [c.strip() for c in lines[1].split("|")[1:-1]]
    assert header == ["line", "earlier: task 0, thread 64 (t=64)", "between",
                      "later: task 0, thread 0 (t=0)"]
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in lines[3:]]
    assert rows == [["17", "write s[64]", "", ""],
                    ["18", "", "<- missing sync: insert before this line", ""],
                    ["19", "", "Fence(cuda_in_order, cuda_in_order)", ""],
                    ["21", "", "", "read s[64]"]]
    war = [[c.strip() for c in line.split("|")[1:-1]] for line in table_lines(race(
        FindingKind.WAR))[3:]]
    assert (war[0][1], war[-1][3]) == ("read s[64]", "write s[64]")


def test_no_table_without_a_race() -> None:
    f = Finding(FindingKind.out_of_bounds, "OUT OF BOUNDS", "x", SrcLoc("k.py", 3, 1))
    assert table_lines(f) == [] and view(f) is None


def test_svg_draws_lanes_accesses_syncs_and_the_missing_edge() -> None:
    v = view(race())
    assert v is not None
    root = ET.fromstring(svg(v))
    texts = [t.text for t in root.iter(SVG + "text")]
    assert "write s[64]" in texts and "read s[64]" in texts
    assert "earlier access thread" in texts and "task 0, thread 64" in texts
    assert "missing sync goes here" in texts and "missing happens-before edge" in texts
    assert "line 19: did not order them" in texts
    assert len(list(root.iter(SVG + "circle"))) == 2
    lanes = [ln for ln in root.iter(SVG + "line") if ln.get("y1") == ln.get("y2")]
    bars = [ln for ln in root.iter(SVG + "line") if ln.get("x1") == ln.get("x2")]
    assert len(lanes) == 2 and len(bars) == 2
    (edge,) = [p for p in root.iter(SVG + "path") if p.get("marker-end")]
    assert edge.get("marker-end") == "url(#arrow)" and edge.get("stroke-dasharray")


def test_cli_table_and_pictures(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_dir = tmp_path / "pics"
    code = main(["--cex-table", "--cex-svg", str(out_dir),
                 str(EXAMPLES / "smem_exchange_bug_nofence.py")])
    out, err = capsys.readouterr()
    assert code == 1
    assert "per-thread events (trace order):" in out and "| read tile[255]" in out
    (picture,) = out_dir.glob("*.svg")
    assert picture.name == "smem_exchange_bug_nofence-0-RAW-L15.svg"
    assert "1 counterexample picture(s)" in err
    texts = [t.text for t in ET.parse(picture).getroot().iter(SVG + "text")]
    assert "write tile[255]" in texts and "(before line 14)" in texts


def test_verbose_shows_the_table_and_a_bad_folder_is_refused_before_proving(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    main(["-v", str(EXAMPLES / "smem_exchange_bug_nofence.py")])
    assert "per-thread events" in capsys.readouterr().out
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["--cex-svg", str(blocker / "sub"), str(EXAMPLES / "saxpy.py")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--cex-svg" in err and "cannot write there" in err
