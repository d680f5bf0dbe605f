"""The error-code catalogue, read from `error_codes.toml` (its single source).

Renderers take rule titles from here (SARIF `tool.driver.rules`), `--explain` prints an entry,
and `python -m verifier.report.catalog` writes `docs/error-codes.md`, so the documentation and
the tool cannot drift apart (tests/test_catalog.py checks both directions against the code).
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CATALOG_FILE = Path(__file__).with_name("error_codes.toml")
_STAGES = {"P": "Parse / typecheck", "O": "Configuration objects", "A": "Static analysis",
           "L": "Lowering legality", "V": "Verification", "U": "Command line"}


@dataclass(frozen=True)
class ErrorCode:
    code: str
    title: str  # what triggers it
    rule: str  # the LANG-/SEM-/COLL- rule it enforces
    messages: str  # message keywords the user sees
    fix: str = ""
    example: str = ""  # a small program fragment that triggers it

    @property
    def stage(self) -> str:
        return _STAGES[self.code.removeprefix("ERR-")[0]]


@cache
def catalog() -> dict[str, ErrorCode]:
    data = tomllib.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    return {code: ErrorCode(code, **fields) for code, fields in data.items()}


def explain(code: str) -> str | None:
    """The `--explain CODE` text, or None for a code not in the catalogue."""
    entry = catalog().get(code.strip().upper())
    if entry is None:
        return None
    lines = [f"{entry.code} ({entry.stage}, rule {entry.rule}): {entry.title}",
             f"  message: {entry.messages}"]
    if entry.example:
        lines += ["  example:", *("    " + ln for ln in entry.example.rstrip().splitlines())]
    if entry.fix:
        lines.append(f"  fix: {entry.fix}")
    return "\n".join(lines) + "\n"


def to_markdown() -> str:
    out = ["# Error codes", "",
           "Every `ERR-*` code spork-verify can emit. Generated from "
           "`verifier/report/error_codes.toml` by `python -m verifier.report.catalog > "
           "docs/error-codes.md`; `spork-verify --explain CODE` prints one entry. Rule ids point "
           "into [`docs/rules.md`](rules.md).", ""]
    stage = None
    order = list(_STAGES)
    for entry in sorted(catalog().values(),
                        key=lambda e: (order.index(e.code[4]), e.code)):
        if entry.stage != stage:
            stage = entry.stage
            out += [f"## {stage}", ""]
        out += [f"### {entry.code}", "", f"* **Rule:** {entry.rule}",
                f"* **Meaning:** {entry.title}", f"* **Message:** {entry.messages}"]
        if entry.fix:
            out.append(f"* **Fix:** {entry.fix}")
        if entry.example:
            out += ["* **Example:**", "", "  ```python",
                    *("  " + ln for ln in entry.example.rstrip().splitlines()), "  ```"]
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(to_markdown())
