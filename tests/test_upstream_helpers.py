"""benchmarks/upstream_adapter.py: an upstream test-helper function (e.g. tk_gemm_util's
`handwrite_gemm`) that stops at a rewrite spork-verify does not reproduce (API-2) is rebuilt
under upstream Exo-GPU with its arguments spelled as upstream can evaluate them (SCHED-2);
without upstream (no $SPORK_CONFORMANCE_EXO_GPU_PYTHON) the `unsupported` stands. No upstream
is needed here."""

from __future__ import annotations

import dataclasses
import enum
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import upstream_adapter as adapter  # noqa: E402
from verifier.diagnostics import Unsupported  # noqa: E402
from verifier.lang import bf16  # noqa: E402

MOD = "exo.platforms.Sm90.tk_gemm_util"


class Bug(enum.Enum):
    none = 1


@dataclasses.dataclass
class Config:
    ncta_M: int = 1
    A_type: object = bf16
    bug: Bug = Bug.none


Bug.__module__ = Config.__module__ = MOD


def test_arguments_are_spelled_for_upstream() -> None:
    text = adapter._value_text(Config(ncta_M=2), MOD)
    mod = f"__import__({MOD!r}, fromlist=['_'])"
    assert text == f"{mod}.Config(ncta_M=2, A_type='bf16', bug={mod}.Bug.none)"
    with pytest.raises(TypeError, match="cannot pass"):
        adapter._value_text(object(), MOD)


def test_without_upstream_the_unsupported_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(adapter.EXO_GPU_ENV, raising=False)

    def build(config: Config) -> None:
        raise Unsupported("not supported by spork-verify: insert_pass", rule="API-2")
    wrapped = adapter._rebuilt_when_unsupported(MOD, "handwrite_gemm", build)
    with pytest.raises(Unsupported, match="insert_pass"):
        wrapped(Config())
