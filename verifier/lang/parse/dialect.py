"""Which Exo-GPU dialect a proc is written in, from what it writes and imports (DIAL-1).

Reads a proc's Python AST (names only one dialect has, per `stdlib.dialects`; the spellings
only one dialect has: February's guard `barrier(b)` and lagged `Await(b, tl, ~n)`, endgame's
`.ring_guarded_by`), the values its `@` annotations evaluate to (noted by the parser while it
parses), and, for a proc that shows neither, the `from exo... import NAME` lines of its file.
Produces the dialect, or a located ERR-P28 when one proc mixes the two. Never a flag: the same
file always reads the same way.
"""

from __future__ import annotations

import ast
import functools
import os
from dataclasses import dataclass, field
from typing import Callable

from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.lang.stdlib import dialects

# modules only the endgame dialect has: importing one makes the file's unmarked procs endgame
ENDGAME_MODULES = ("exo.platforms.cuda_tk",)


@dataclass(frozen=True)
class Evidence:
    dialect: str
    construct: str  # the name or spelling, as the message quotes it
    loc: SrcLoc


@dataclass
class DialectNotes:
    """The evidence one parse collects, in source order of discovery."""

    items: list[Evidence] = field(default_factory=list)

    def note(self, dialect: str, construct: str, loc: SrcLoc) -> None:
        self.items.append(Evidence(dialect, construct, loc))

    def decide(self, proc: str, file: str) -> str:
        """The proc's dialect: its own evidence, else its file's imports, else February's.
        Rules: DIAL-1"""
        found = sorted(self.items, key=lambda e: (e.loc.line, e.loc.col))
        kinds = {e.dialect for e in found}
        if len(kinds) > 1:
            first = found[0]
            other = next(e for e in found if e.dialect != first.dialect)
            raise RejectedInput(
                f"{proc} mixes the two Exo-GPU dialects: {first.construct} (line "
                f"{first.loc.line}) is {dialects.DIALECTS[first.dialect]}, {other.construct} "
                f"(line {other.loc.line}) is {dialects.DIALECTS[other.dialect]}; write each "
                "proc in one of them (specs/dialects.md DIAL-1)", other.loc, rule="DIAL-1",
                code="ERR-P28")
        if kinds:
            return kinds.pop()
        return file_dialect(file) or dialects.SPORK26


def scan(tree: ast.AST, loc: Callable[[ast.AST], SrcLoc], notes: DialectNotes) -> None:
    """Names and spellings of one dialect in a proc's text."""
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and
             isinstance(n.ctx, ast.Store)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                node.id not in bound:
            hit = dialects.marker(node.id)
            if hit is not None:
                notes.note(hit[0], node.id, loc(node))
        elif isinstance(node, ast.Attribute) and node.attr == "ring_guarded_by":
            notes.note(dialects.ENDGAME, ".ring_guarded_by(...)", loc(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "barrier" and node.args:
                notes.note(dialects.SPORK26, f"the guard `{ast.unparse(node)}`", loc(node))
            elif node.func.id == "Await" and len(node.args) == 3 and \
                    isinstance(node.args[2], ast.UnaryOp) and \
                    isinstance(node.args[2].op, ast.Invert):
                notes.note(dialects.SPORK26, f"the lagged `Await(..., "
                           f"{ast.unparse(node.args[2])})`", loc(node))


def message_dialect(dialect: str, file: str) -> str:
    """The dialect whose words a proc's messages take: its own when endgame; else endgame too
    when its file's code names only endgame's marked names (the proc itself shows neither
    dialect: a proc with February's evidence puts February's names in the file). The rules
    applied stay the proc's own dialect's. Rules: DIAL-19"""
    if dialect == dialects.ENDGAME:
        return dialect
    try:
        stat = os.stat(file)
    except OSError:
        return dialect
    return _names_dialect(file, stat.st_mtime_ns, stat.st_size) or dialect


def _syntax_tree(file: str) -> ast.Module | None:
    """The file's syntax tree, or None where it cannot be read or parsed (the loader reports
    that itself; a dialect guess just has nothing to go on)."""
    try:
        with open(file, encoding="utf-8") as f:
            return ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None


@functools.lru_cache(maxsize=64)
def _names_dialect(file: str, mtime_ns: int, size: int) -> str | None:
    """The one dialect whose marked names a version of `file` uses (loads and imports)."""
    tree = _syntax_tree(file)
    if tree is None:
        return None
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)] + \
        [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names]
    found = {hit[0] for hit in map(dialects.marker, names) if hit is not None}
    return found.pop() if len(found) == 1 else None


def file_dialect(file: str) -> str | None:
    """The dialect a file's imports name (one dialect's names or modules only), or None."""
    try:
        stat = os.stat(file)
    except OSError:
        return None
    return _imports_dialect(file, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _imports_dialect(file: str, mtime_ns: int, size: int) -> str | None:
    """`file_dialect` of one version of the file (the key holds its time and size)."""
    tree = _syntax_tree(file)
    if tree is None:
        return None
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                (node.module == "exo" or node.module.startswith("exo.")):
            if node.module in ENDGAME_MODULES:
                found.add(dialects.ENDGAME)
            for alias in node.names:
                hit = dialects.marker(alias.name)
                if hit is not None:
                    found.add(hit[0])
        elif isinstance(node, ast.Import):
            found |= {dialects.ENDGAME for a in node.names if a.name in ENDGAME_MODULES}
    return found.pop() if len(found) == 1 else None
