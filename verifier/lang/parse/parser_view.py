"""What `parse_sync` may use of the `ProcParser` that owns the walk.

`parse.ProcParser` hands itself to the sync-statement readers of `parse_sync`; they see it
only through this protocol, so `parse_sync` never imports `parse` (no import cycle).
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.lang.ir import ir


class ParserView(Protocol):
    py_env: dict[str, Any]

    def loc(self, node: ast.AST) -> SrcLoc: ...

    def err(self, node: ast.AST, msg: str, code: str, rule: str = "") -> RejectedInput: ...

    def py_eval(self, node: ast.expr) -> Any: ...

    def lookup(self, name: str) -> Any: ...

    def memory(self, node: ast.expr) -> Any: ...

    def scalar_name(self, node: ast.expr) -> str | None: ...

    def note_dialect(self, dialect: str, construct: str, node: ast.AST) -> None: ...

    def expr(self, node: ast.expr) -> ir.Expr: ...

    def access(self, node: ast.expr) -> ir.Access: ...

    def window(self, node: ast.expr) -> ir.Window: ...

    @staticmethod
    def close_interval(a: ir.Access, extent: ir.Expr) -> ir.Access: ...
