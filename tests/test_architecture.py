"""The package DAG of architecture.md §1 / style.md §1-2, enforced on the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from verifier.lang import ir

ROOT = Path(__file__).resolve().parent.parent / "verifier"

# package -> packages it may import (besides itself and the leaf modules)
ALLOWED = {
    "lang": set(),
    "collectives": {"lang"},
    "semantics": {"lang", "collectives"},
    "encode": {"lang", "collectives", "semantics"},
    "codegen": {"lang", "collectives"},
    "report": set(),
    "cli": {"lang", "encode", "report", "codegen", "semantics"},
}
LEAVES = {"diagnostics", "results", "__init__"}
Z3_MODULES = {"collectives/symbolic.py"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def _package(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 else rel.stem


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_import_graph(path: Path) -> None:
    pkg = _package(path)
    if pkg in LEAVES:
        allowed: set[str] = set()
    else:
        allowed = ALLOWED[pkg]
    for mod in _imports(path):
        if not mod.startswith("verifier."):
            if mod == "z3" or mod.startswith("z3."):
                rel = str(path.relative_to(ROOT))
                assert pkg == "encode" or rel in Z3_MODULES, f"{rel} imports z3"
            continue
        target = mod.split(".")[1]
        if target in LEAVES or target == pkg or target == "__version__":
            continue
        assert target in allowed, f"{path.relative_to(ROOT)}: {pkg} may not import {target}"


def test_interpreters_handle_every_statement() -> None:
    """Every Stmt class has a case in the machine, the static pass, the printer and codegen
    (style.md §5: no silent fallthrough)."""
    sources = {name: (ROOT / rel).read_text() for name, rel in (
        ("machine", "semantics/machine.py"), ("static", "semantics/static.py"),
        ("printer", "lang/printer.py"))}
    codegen = "".join(p.read_text() for p in (ROOT / "codegen").glob("*.py"))
    for cls in ir.STMT_TYPES:
        pattern = f"ir.{cls.__name__}("
        for name, text in sources.items():
            assert pattern in text, f"{name} has no case for {cls.__name__}"
        assert pattern in codegen, f"codegen has no case for {cls.__name__}"
