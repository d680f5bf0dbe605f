"""Source locations and the error hierarchy; a leaf module every package may import.

Errors carry a `SrcLoc` and the id of the rule (LANG-*, SEM-*, COLL-*) and error code (ERR-*)
they enforce, so every renderer shows the same `file:line:col`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SrcLoc:
    """A 1-based position in a user file."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN_LOC = SrcLoc("<unknown>", 0, 0)


def char_column(line: str, byte_offset: int) -> int:
    """The 1-based character column of a UTF-8 byte offset into `line`: Python's AST and code
    positions count bytes, while `SyntaxError`, editors and every location we report count
    characters."""
    return len(line.encode("utf-8", errors="surrogatepass")[:byte_offset]
               .decode("utf-8", errors="ignore")) + 1


class SporkError(Exception):
    """Base of user-facing errors: a message, where it happened, and the rule broken."""

    def __init__(self, message: str, loc: SrcLoc | None = None, rule: str = "",
                 code: str = "", variable: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc or UNKNOWN_LOC
        self.rule = rule
        self.code = code
        self.variable = variable
        self.proc: str | None = None  # the @proc being defined when it was raised, if any

    def render(self) -> str:
        tag = self.code or self.rule or "error"
        return f"{self.loc}: error[{tag}]: {self.message}"


class RejectedInput(SporkError):
    """The program breaks a static rule (stages P, O, A, L); verdict `rejected`.

    Usual fix: change the program as the message says, e.g. add a Fence, use a literal loop bound.
    """


class Unsupported(SporkError):
    """A construct outside the verifiable fragment (ERR-V11); verdict `unsupported`.

    Nothing is claimed about such a program: its obligations are not discharged.
    """


class SharedLimitation(Unsupported):
    """Outside the fragment of upstream's own `sync_check` as well (e.g. SMEM allocated per CTA
    in a cluster): `p.sync_check(...)` raises it, as upstream's does, where other `Unsupported`
    constructs only make it skip (API-3)."""


class InternalError(SporkError):
    """A bug in spork-verify itself; the CLI exits 4."""


class UnhandledNode(InternalError):
    """An interpreter met an IR node it has no case for (never silently skipped)."""

    def __init__(self, node: object) -> None:
        super().__init__(f"unhandled IR node {type(node).__name__}", getattr(node, "loc", None))
