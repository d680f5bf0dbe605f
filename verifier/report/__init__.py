"""Renderers of verdicts: text for people, JSON/SARIF/JUnit for tools (architecture.md §4).
Never decide."""

from __future__ import annotations

from verifier.report.json_out import to_json
from verifier.report.junit import to_junit
from verifier.report.sarif import to_sarif
from verifier.report.text import to_text
from verifier.results import ProcResult

FORMATS = ("text", "json", "sarif", "junit")


def render(fmt: str, results: list[ProcResult], verbose: bool = False,
           cex_table: bool = False) -> str:
    """The report in format `fmt` (one of FORMATS)."""
    if fmt == "json":
        return to_json(results)
    if fmt == "sarif":
        return to_sarif(results)
    if fmt == "junit":
        return to_junit(results)
    return to_text(results, verbose, cex_table)


__all__ = ["FORMATS", "render", "to_json", "to_junit", "to_sarif", "to_text"]
