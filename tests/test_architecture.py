"""The package DAG of architecture.md §1 / style.md §1-2, enforced on the source."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

from verifier.lang.ir import ir

ROOT = Path(__file__).resolve().parent.parent / "verifier"

# package -> packages it may import (besides itself and the leaf modules)
ALLOWED = {
    "lang": set(),
    "load": {"lang"},
    "collectives": {"lang"},
    "semantics": {"lang", "collectives"},
    "check": {"lang", "collectives", "semantics"},
    "encode": {"lang", "collectives", "semantics", "check"},
    "codegen": {"lang", "collectives"},
    "chain": {"lang"},
    "report": set(),
    "cli": {"lang", "load", "encode", "report", "codegen", "semantics", "check", "cli_io", "cli_chain",
            "cli_cert", "cli_gate", "cli_sync", "cli_procs"},
    "cli_procs": {"lang", "cli_io"},  # a file's procs proved side by side (CLI-7)
    "cli_sync": {"lang", "load", "encode", "semantics"},  # in-file sync_check answers (SYNC-*)
    "cli_chain": {"lang", "chain", "encode"},
    "cli_io": set(),
    "cli_cert": {"lang", "load", "encode", "codegen", "cli_io", "cli_chain", "cli_gate"},  # re-runs a chain claim
    "cli_gate": {"load", "encode", "cli_io"},  # what a run trusts (specs/threat_model.md)
    "pytest_plugin": {"cli", "lang", "load", "report"},
}
LEAVES = {"diagnostics", "results", "user_files", "locations", "heap", "__init__"}
# inside lang/ (issue 18): the IR at the bottom, then the stdlib namespace, the parser, the rewrites;
# lang/__init__.py (the user-facing namespace) may import them all
LANG_ALLOWED = {
    "ir": set(),
    "stdlib": {"ir"},
    "parse": {"ir", "stdlib"},
    "rewrite": {"ir", "stdlib", "parse"},
}
Z3_MODULES = {"collectives/symbolic.py", "chain/smt.py"}


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


@pytest.mark.parametrize("path", sorted((ROOT / "lang").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_lang_layers(path: Path) -> None:
    """lang/ is four packages by concern; each imports only those below it (issue 18)."""
    rel = path.relative_to(ROOT / "lang")
    assert len(rel.parts) == 2 or rel.name == "__init__.py", f"{rel}: every lang module lives in a sub-package"
    if len(rel.parts) == 1:
        return
    own = rel.parts[0]
    for mod in _imports(path):
        parts = mod.split(".")
        if parts[:2] != ["verifier", "lang"]:
            continue
        assert len(parts) > 2, f"lang/{rel} imports the user-facing namespace verifier.lang"
        target = parts[2]
        assert target == own or target in LANG_ALLOWED[own], f"lang/{rel}: {own} may not import {target}"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _file_edges(path: Path, modules: set[str]) -> set[str]:
    """Modules this file imports explicitly, at any depth (function bodies and TYPE_CHECKING
    blocks included): `from pkg import sub` counts as an import of `pkg.sub`."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module in modules:
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules
            out |= subs or {node.module}
            if len(subs) < len(node.names):
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in modules}
    return out


def test_no_file_level_import_cycles() -> None:
    """No two files of verifier/ import each other, directly or through others (issue 9:
    the static checks, the machine and the parser each depend only downward)."""
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        graph.add_edges_from((name, dep) for dep in _file_edges(path, set(files)) if dep != name)
    cycles = [c for c in nx.simple_cycles(graph)
              if not all(files[m].name == "__init__.py" or _is_parent_of_all(m, c) for m in c)]
    assert not cycles, f"file-level import cycles: {cycles[:5]}"


def _is_parent_of_all(pkg: str, cycle: list[str]) -> bool:
    return all(m == pkg or m.startswith(pkg + ".") for m in cycle)


def test_machine_and_static_rules_are_separate() -> None:
    """The machine never reads the static rules, and the static rules never read the machine
    (architecture.md §1)."""
    for path in (ROOT / "semantics").glob("*.py"):
        assert not any(m.startswith("verifier.check") for m in _imports(path)), path.name
    for path in (ROOT / "check").glob("*.py"):
        bad = {m for m in _imports(path) if m.startswith("verifier.semantics.machine")}
        assert not bad, f"{path.name} imports {bad}"


def test_interpreters_handle_every_statement() -> None:
    """Every Stmt class has a case in the machine, the static pass, the printer and codegen
    (style.md §5: no silent fallthrough)."""
    sources = {name: (ROOT / rel).read_text() for name, rel in (
        ("machine", "semantics/machine.py"), ("static", "check/static.py"),
        ("printer", "lang/ir/printer.py"))}
    codegen = "".join(p.read_text() for p in (ROOT / "codegen").glob("*.py"))
    for cls in ir.STMT_TYPES:
        pattern = f"ir.{cls.__name__}("
        for name, text in sources.items():
            assert pattern in text, f"{name} has no case for {cls.__name__}"
        assert pattern in codegen, f"codegen has no case for {cls.__name__}"
