"""Shared helpers of the codegen tests: the proved kernels and their real certificates.

Certificates come from `verify_proc` and are cached for the session (block_reduce takes ~10 s).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from verifier.encode import verify_proc
from verifier.lang import ir
from verifier.lang.load import load_procs
from verifier.results import Certificate, Verdict

from conftest import expectations, kernel_files

HERE = Path(__file__).resolve().parent
LOCAL_KERNELS = HERE / "codegen_kernels.py"
SM90_ONLY = ("cluster_exchange", "named_warps")  # clusters need sm_90


def proved_cases() -> list[tuple[Path, str]]:
    """(file, proc) of every bundled kernel expected to be proved, then the local kernels."""
    cases = [(e.file, e.proc) for f in kernel_files() for e in expectations(f)
             if e.verdict == "proved"]
    cases += [(LOCAL_KERNELS, p.name) for p in load_procs(LOCAL_KERNELS)]
    return cases


@lru_cache(maxsize=None)
def _procs(path: Path) -> dict[str, ir.Proc]:
    out = {}
    for p in load_procs(path):
        assert isinstance(p, ir.Proc), getattr(p, "error", p)
        out[p.name] = p
    return out


def load(path: Path, name: str) -> ir.Proc:
    return _procs(path)[name]


@lru_cache(maxsize=None)
def certified(path: Path, name: str) -> tuple[ir.Proc, Certificate]:
    """The proc and the certificate of its proof (asserting it is proved)."""
    p = load(path, name)
    result = verify_proc(p)
    assert result.verdict is Verdict.proved, (name, result.findings)
    assert result.certificate is not None
    return p, result.certificate


def local(name: str) -> tuple[ir.Proc, Certificate]:
    return certified(LOCAL_KERNELS, name)


def example(name: str) -> tuple[ir.Proc, Certificate]:
    for path, proc_name in proved_cases():
        if proc_name == name:
            return certified(path, name)
    raise KeyError(name)
