"""Upstream-style programs (tests/upstream_style/): files written for Exo-GPU load unchanged
and get their expected verdicts (LOAD-6 and the upstream surface, issue 8)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from verifier.encode import verify_proc
from verifier.lang.load import load_procs
from verifier.lang.load_isolated import load_isolated

from conftest import ROOT, case_params, expectations

UPSTREAM_STYLE = ROOT / "tests" / "upstream_style"
CASES = [e for f in sorted(UPSTREAM_STYLE.glob("*.py")) for e in expectations(f)]


@pytest.mark.parametrize("case", case_params(CASES))
def test_upstream_style_verdict(case) -> None:  # type: ignore[no-untyped-def]
    loaded = load_isolated(case.file)
    procs = {p.name: p for p in loaded.procs}
    if case.verdict == "rejected" and case.proc not in procs:
        assert loaded.error is not None and case.kind in (loaded.error.code, None)
        return
    result = verify_proc(procs[case.proc])
    assert result.verdict.value == case.verdict, result
    if case.kind:
        finding = result.findings[0]
        assert case.kind in (finding.kind.value, finding.code)
        if case.variable:
            assert finding.variable == case.variable
        if case.line:
            assert finding.loc.line == case.line


@pytest.mark.rule("LOAD-6")
def test_exo_names_are_ours_only_while_loading() -> None:
    real_exo = types.ModuleType("exo")  # stands for an installed exo-lang package
    sibling = "saxpy_pre_config"
    sys.modules["exo"] = real_exo
    try:
        procs = load_procs(UPSTREAM_STYLE / "saxpy_upstream_imports.py")
        assert [p.name for p in procs] == ["saxpy"]
        assert sys.modules["exo"] is real_exo
        assert not any(k.startswith("exo.") for k in sys.modules)
    finally:
        del sys.modules["exo"]
    assert sibling not in sys.modules
    assert str(UPSTREAM_STYLE) not in sys.path


@pytest.mark.rule("LOAD-6")
def test_missing_upstream_name_is_a_located_rejection(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text("from exo.platforms.cuda import no_such_thing\n")
    loaded = load_isolated(path)
    assert loaded.error is not None and loaded.error.loc.line == 1
    assert "exo.platforms.cuda.no_such_thing is not part of spork-verify" in \
        loaded.error.message
