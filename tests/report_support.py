"""Recorded reports of the examples (proofs/*.json) as `ProcResult`s, for renderer tests that
must cover every example without re-running the slow proofs."""

from __future__ import annotations

from pathlib import Path

from conftest import EXAMPLES, ROOT, expectations

from verifier.report.json_in import results_from_json
from verifier.results import ProcResult

PROOFS = ROOT / "proofs"


def examples_with(verdict: str) -> list[Path]:
    return sorted(p for p in EXAMPLES.glob("*.py")
                  if any(e.verdict == verdict for e in expectations(p)))


def recorded(example: Path) -> list[ProcResult]:
    return results_from_json((PROOFS / f"{example.stem}.json").read_text())
