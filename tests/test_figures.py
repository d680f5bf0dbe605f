"""proofs/figures.py: the README's figures come from measured points in committed CSVs
(issue 20); every row is a measurement with its date, and the figures redraw from them."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "proofs"))
import figures  # noqa: E402

CSVS = [figures.UPSTREAM_CSV, figures.PROOF_CSV, figures.FILES_CSV]


@pytest.mark.parametrize("path", CSVS, ids=lambda p: p.name)
def test_each_csv_says_when_and_where_it_was_measured(path) -> None:  # type: ignore[no-untyped-def]
    rows, notes = figures.read_csv(path)
    assert rows and any("UTC" in n for n in notes) and any("CPUs" in n for n in notes)
    for row in rows:
        for key in ("cpu_s", "wall_s"):
            assert float(row[key]) > 0, row  # measured, not blank


def test_the_proof_rows_name_the_kernels_of_upstreams_figure() -> None:
    rows, _ = figures.read_csv(figures.PROOF_CSV)
    assert {r["kernel"] for r in rows} == set(figures.KERNELS)
    assert all(r["verdict"] == "proved" for r in rows)
    upstream, _ = figures.read_csv(figures.UPSTREAM_CSV)
    assert {r["kernel"] for r in upstream} == set(figures.KERNELS)
    assert {int(r["n"]) for r in upstream} <= set(figures.SIZES)


def test_the_figures_redraw_from_the_csvs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib", reason="pip install -e '.[figures]'")
    written = figures.plot_sync_check(tmp_path) + figures.plot_files(tmp_path)
    assert sorted(p.name for p in written) == [
        "sporkbench_files.png", "sporkbench_files.svg",
        "sync_check_vs_proof.png", "sync_check_vs_proof.svg"]
    assert all(p.stat().st_size > 1000 for p in written)


def test_the_readme_shows_both_figures() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in ("sync_check_vs_proof", "sporkbench_files"):
        assert f"docs/pictures/{name}.svg" in readme
        assert (ROOT / "docs" / "pictures" / f"{name}.svg").exists()
        assert (ROOT / "docs" / "pictures" / f"{name}.png").exists()
