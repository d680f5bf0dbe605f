"""Shared harness of the error-catalog tests (language.md §9, collectives.md error table).

A `Case` is a small program built around one proc `k`; the line marked `#!` is where the error
must be reported, and `at` (a substring of that line) fixes the column (default: the first
non-blank column of the line, i.e. the statement). `first_error` loads the file and returns the
first diagnostic the tool reports for `k`: a load error, a parse error, or the first finding of
`verify_proc` (static errors are found before any proof).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from verifier.diagnostics import InternalError, RejectedInput, SporkError, SrcLoc
from verifier.encode import verify_proc
from verifier.lang.ir import ir
from verifier.load.load import load_procs

SIG = "n: size, x: f32[n, 256] @ CudaGmemLinear, y: f32[n, 256] @ CudaGmemLinear"
KERNEL = ["    with CudaDeviceFunction(blockDim=256):", "        for task in cuda_tasks(0, n):"]


@dataclass(frozen=True)
class Case:
    """`body` lines go after the default kernel header when `kernel` (12-space indent), else
    straight into `k` (4-space indent); `sig_mark` puts the `#!` mark on the `def` line."""

    code: str
    keyword: str
    body: list[str]
    kernel: bool = True
    at: str | None = None
    sig: str = SIG
    sig_mark: bool = False
    prelude: list[str] = field(default_factory=list)
    verdict: str = "rejected"

    @property
    def id(self) -> str:
        return f"{self.code}-{self.keyword[:24]}"

    def source(self) -> str:
        lines = ["from verifier.lang import *", *self.prelude, "", "", "@proc",
                 f"def k({self.sig}):" + ("  #!" if self.sig_mark else "")]
        lines += (KERNEL if self.kernel else []) + self.body
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Reported:
    code: str
    message: str
    loc: SrcLoc
    verdict: str


def first_error(path: Path) -> Reported:
    """The first diagnostic for proc `k` of `path` (or of the file, for load errors)."""
    try:
        procs = load_procs(path)
    except SporkError as err:  # a load error, or @proc k raising at decoration time
        if isinstance(err, InternalError):
            raise
        verdict = "rejected" if isinstance(err, RejectedInput) else "unsupported"
        return Reported(err.code, err.message, err.loc, verdict)
    (p,) = [q for q in procs if q.name == "k"]
    assert isinstance(p, ir.Proc)
    result = verify_proc(p)
    assert result.findings, (result.verdict, "no finding")
    finding = result.findings[0]
    return Reported(finding.code, finding.message, finding.loc, result.verdict.value)


def marked(text: str, at: str | None) -> tuple[int, int]:
    """(line, column) of the `#!` line; the column of `at` in it, or its first non-blank."""
    line_no, line = next((i, s) for i, s in enumerate(text.splitlines(), 1) if "#!" in s)
    if at is None:
        return line_no, len(line) - len(line.lstrip()) + 1
    assert at in line, (at, line)
    return line_no, line.index(at) + 1


def check_case(tmp_path: Path, case: Case) -> Reported:
    """Run `case` and assert code, verdict, keyword, file, line and column."""
    text = case.source()
    path = tmp_path / "prog.py"
    path.write_text(text)
    got = first_error(path)
    line, col = marked(text, case.at)
    assert got.code == case.code, got
    assert got.verdict == case.verdict, got
    assert case.keyword in got.message, got.message
    assert got.loc.file == str(path), got.loc
    assert (got.loc.line, got.loc.col) == (line, col), (got.loc, got.message)
    return got
