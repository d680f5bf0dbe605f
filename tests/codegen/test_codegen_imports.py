"""verifier.codegen imports only lang, collectives, diagnostics, results and itself; never
semantics, encode or z3 (style.md §1-2)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import verifier.codegen

ALLOWED = ("verifier.lang", "verifier.collectives", "verifier.diagnostics", "verifier.results",
           "verifier.codegen")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_codegen_import_graph() -> None:
    package = Path(verifier.codegen.__file__).parent
    bad = []
    for path in sorted(package.glob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if name == "verifier" or top in sys.stdlib_module_names or top == "__future__":
                continue
            if not name.startswith(ALLOWED):
                bad.append(f"{path.name}: {name}")
    assert not bad, bad


def test_codegen_files_are_small() -> None:
    package = Path(verifier.codegen.__file__).parent
    sizes = {p.name: len(p.read_text().splitlines()) for p in package.glob("*.py")}
    assert max(sizes.values()) < 500, sizes
