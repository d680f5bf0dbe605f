"""Where a `@proc` function is written: its `def` node in the whole file's syntax tree, and
columns counted in characters (LANG-2.1; specs/loading.md LOAD-1).

The file is parsed whole, as the interpreter parsed it, rather than the function's lines cut
out and dedented: a cut-out block re-parsed alone disagrees with Python on form feeds in the
indentation, on a nested `def` and on tabs, and its columns would need re-basing. Line numbers
of the nodes are then the file's own; AST columns are UTF-8 byte offsets, and `Definition.loc`
turns them into the 1-based character columns `SyntaxError` and editors use.

Non-goals: the meaning of the nodes (`parse`).
"""

from __future__ import annotations

import ast
import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable

from verifier.diagnostics import RejectedInput, SrcLoc, char_column
from verifier.user_files import source_lines


@dataclass(frozen=True)
class Definition:
    """The `def` of one function, and the lines of the file it is in."""

    file: str
    node: ast.stmt  # a FunctionDef; AsyncFunctionDef is refused by the parser (ERR-P05)
    file_lines: tuple[str, ...]  # without their "\n"
    first_line: int  # of the first decorator, else of the `def`

    @property
    def lines(self) -> tuple[str, ...]:
        """The definition's own lines, decorators included."""
        return self.file_lines[self.first_line - 1:getattr(self.node, "end_lineno", None)]

    def loc(self, node: ast.AST) -> SrcLoc:
        line = getattr(node, "lineno", self.first_line)
        offset = getattr(node, "col_offset", 0)
        text = self.file_lines[line - 1] if 0 < line <= len(self.file_lines) else ""
        return SrcLoc(self.file, line, char_column(text, offset))


@functools.lru_cache(maxsize=8)
def _tree(file: str, text: str) -> ast.Module:
    return ast.parse(text, file)


def find_definition(fn: Callable[..., Any]) -> Definition:
    """The `def` that made `fn`: the function (or async function) definition whose first line
    (its first decorator's) is the code's first line; its name decides between several."""
    file = inspect.getsourcefile(fn) or fn.__code__.co_filename
    lines = source_lines(file, fn.__globals__)
    if not lines:
        raise OSError(f"the source of {fn.__name__} cannot be read (is {file} a file?)")
    first = fn.__code__.co_firstlineno
    candidates = [n for n in ast.walk(_tree(file, "".join(lines)))
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and min([n.lineno, *(d.lineno for d in n.decorator_list)]) == first]
    file_lines = tuple(line.rstrip("\n") for line in lines)
    if not candidates:
        raise RejectedInput("@proc must decorate a function definition (`def name(...):`), "
                            "not a lambda or another callable", SrcLoc(file, first, 1),
                            code="ERR-P05")
    node = next((n for n in candidates if n.name == fn.__name__), candidates[0])
    return Definition(file, node, file_lines, first)  # shared: the parser never edits nodes
