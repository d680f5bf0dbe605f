"""Renderers of verdicts: text for people, JSON for CI (architecture.md §4). Never decide."""

from verifier.report.json_out import to_json
from verifier.report.text import to_text

__all__ = ["to_json", "to_text"]
