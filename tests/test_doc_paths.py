"""Every file the README, docs/ and specs/ cite exists in the repository (issue 19): a user
following a citation must find the file, and a rename must update its citations. Links must
resolve exactly as a Markdown viewer resolves them; a path named in text (`encode/kills.py`,
`architecture.md §3`) must name a file of the repository by its path, or by its tail. Files
that are not the repository's (upstream's sources, the user's own files in an example) are
listed below with the reason."""

from __future__ import annotations

import fnmatch
import glob
import re
from pathlib import Path

import pytest

from conftest import ROOT

DOCS = sorted([ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("specs/**/*.md")])
_EXTENSIONS = r"md|py|toml|json|ya?ml|txt|svg|cu|smt2|sarif|xsd|sh|cfg|ini"
_MENTION = re.compile(rf"(?<![\w/.$@-])((?:\.{{1,2}}/)?[\w.*{{}},-]+(?:/[\w.*{{}},-]+)*"
                      rf"\.(?:{_EXTENSIONS}))(?![\w/-])")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]+\b|\.\.\.")  # FILE.cu, DIR/PROC/ID.smt2, REF.py

# (document, path) -> why the path is not a file of this repository
NOT_OURS = {
    ("README.md", "examples/**/exocc_*.py"): "sporkbench's kernel files",
    ("README.md", "exocc_Sm90a_m128n256_splitK.py"): "sporkbench's kernel file",
    ("README.md", "exocc_Sm90a_pingpong.py"): "sporkbench's kernel file (branch ping_pong)",
    ("docs/heldout-hopper.md", "test_tma.py"): "upstream Exo-GPU's test",
    ("docs/heldout-hopper.md", "test_Sm90a_gemm.py"): "upstream Exo-GPU's test",
    ("docs/heldout-hopper.md", "Sm90.py"): "upstream Exo-GPU's platform module",
    ("docs/reference/collectives.md", "coll_algebra.py"): "upstream Exo-GPU's source",
    ("docs/reference/collectives.md", "coll_analysis.py"): "upstream Exo-GPU's source",
    ("docs/reference/collectives.md", "distributed_memory.py"): "upstream Exo-GPU's source",
    ("docs/reference/collectives.md", "with_cuda_warps.py"): "upstream Exo-GPU's source",
    ("docs/integrations.md", ".pre-commit-config.yaml"): "the user's pre-commit configuration",
    ("docs/integrations.md", "kernels/reverse.py"): "the user's kernel in an example run",
    ("docs/integrations.md", "kernels/reverse_bug.py"): "the user's kernel in an example run",
    ("docs/integrations.md", "kernels/x.py"): "the user's kernel in an example run",
    ("docs/integrations.md", "pytest.ini"): "the user's pytest configuration",
    ("docs/integrations.md", "kernels/*.py"): "the user's kernels in the Action's example",
    ("docs/integrations.md", "spork-verify.sarif"): "the report the Action writes",
    ("docs/error-codes.md", "cu/saxpy.cu"): "the output of an example --emit-cuda cu run",
    ("README.md", "docs/pictures/smem_matmul_bug_warpfence-0-RAW-L32.svg"): "",
}


def _tracked() -> list[str]:
    skip = {".git", ".venv", "build", "__pycache__", ".pytest_cache", ".hypothesis"}
    return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                  if not skip & set(p.relative_to(ROOT).parts) and p.is_file())


FILES = _tracked()


def _expand(path: str) -> list[str]:
    """`{a,b}` alternatives, as the docs write families of modules."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [x for alt in m[1].split(",") for x in _expand(path[:m.start()] + alt + path[m.end():])]


def _exists(doc: Path, path: str) -> bool:
    """The path relative to the document, the repository or `verifier/`, or as the tail of a
    file of the repository; a glob must match at least one."""
    bases = [doc.parent, ROOT, ROOT / "verifier"]
    for one in _expand(path):
        candidates = [str(base / one) for base in bases]
        if any(glob.glob(c) if "*" in one else Path(c).exists() for c in candidates):
            continue
        tail = one.lstrip("./")
        if any(fnmatch.fnmatch(f, tail) or fnmatch.fnmatch(f, "*/" + tail) for f in FILES):
            continue
        return False
    return True


def _cited(doc: Path) -> set[tuple[str, bool]]:
    """(path, is a link) for every link target and every path-like mention of the document."""
    text = doc.read_text(encoding="utf-8")
    out = set()
    for target in _LINK.findall(text):
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            out.add((target.split("#")[0], True))
    for mention in _MENTION.findall(_LINK.sub("]", text)):
        if not _PLACEHOLDER.search(mention) and not mention.startswith("http"):
            out.add((mention, False))
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.relative_to(ROOT).as_posix())
def test_every_cited_file_exists(doc: Path) -> None:
    rel = doc.relative_to(ROOT).as_posix()
    missing = []
    for path, is_link in sorted(_cited(doc)):
        if (rel, path) in NOT_OURS:
            continue
        ok = (doc.parent / path).exists() if is_link else _exists(doc, path)
        if not ok:
            missing.append(("link " if is_link else "") + path)
    assert not missing, f"{rel} cites files the repository lacks: {missing}"


def test_exceptions_are_still_cited() -> None:
    """An exception no document needs any more is dropped from the list."""
    for (rel, path), _ in NOT_OURS.items():
        assert any(path == cited for cited, _ in _cited(ROOT / rel)), (rel, path)


def test_the_check_is_not_vacuous(tmp_path: Path) -> None:
    doc = tmp_path / "page.md"
    doc.write_text("See [the design](../shared/design/architecture.md), `verifier/lang/load*.py`,"
                   " `encode/gone.py` and `architecture.md`.\n")
    found = {p for p, _ in _cited(doc)}
    assert found == {"../shared/design/architecture.md", "verifier/lang/load*.py",
                     "encode/gone.py", "architecture.md"}
    assert not _exists(doc, "verifier/lang/load*.py") and not _exists(doc, "encode/gone.py")
    assert _exists(doc, "encode/kills.py") and _exists(doc, "verifier/lang/{ir,parse}/")
