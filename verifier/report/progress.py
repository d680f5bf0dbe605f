"""Progress on stderr and colour for verdicts, for people at a terminal (specs/cli.md, CLI-5).

Progress appears only once a run has lasted a second, only on a terminal, never with
`NO_COLOR` set or `--no-progress`; it is one line, rewritten in place and erased before any
report text is written. Colour follows `--color` (auto: a terminal and no `NO_COLOR`).
"""

from __future__ import annotations

import os
import re
import sys
import time
from typing import TextIO

from verifier.user_files import printable

_DELAY_S = 1.0  # a run shorter than this shows no progress at all
_EVERY_S = 0.1  # at most ten redraws a second

_COLOURS = {"PROVED": "32", "REFUTED": "1;31", "REJECTED": "31", "UNKNOWN": "33",
            "UNSUPPORTED": "33", "VACUOUS": "33", "NO HAZARD": "36"}
_VERDICT = re.compile(r"(?<=: )(" + "|".join(_COLOURS) + r")\b")


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def use_colour(choice: str, stream: TextIO) -> bool:
    """`--color auto|always|never` for `stream` (auto: a terminal and NO_COLOR unset)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    return _is_tty(stream) and not os.environ.get("NO_COLOR")


def colour_verdicts(text: str) -> str:
    """The report text with each verdict word in its colour (ANSI)."""
    return _VERDICT.sub(lambda m: f"\x1b[{_COLOURS[m[1]]}m{m[1]}\x1b[0m", text)


class Progress:
    """`gemm_sm80.py: gemm_sm80 12/56 obligations` on one stderr line."""

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled and _is_tty(self.stream) and not os.environ.get("NO_COLOR")
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False
        self.where = ""

    def file(self, path: str, index: int, count: int) -> None:
        name = printable(os.path.basename(path))
        self.where = f"[{index}/{count}] {name}" if count > 1 else name
        self.show(self.where)

    def obligations(self, proc: str, done: int, total: int) -> None:
        self.show(f"{self.where}: {proc} {done}/{total} obligations")

    def show(self, text: str) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.start < _DELAY_S or now - self.last < _EVERY_S:
            return
        self.last = now
        self.stream.write(f"\r\x1b[K{text[:200]}")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
