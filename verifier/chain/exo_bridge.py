"""The parent's side of the exo-lang child (CHAIN-8): spawn it, send a request, read its reply.

This process never imports exo-lang: every use of it (reading the reference, compiling an
erased proc to C, running both procs) happens in `exo_child`, a fresh interpreter, so the `exo`
names spork-verify serves to kernel files and exo-lang's own package never meet.
"""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import verifier
from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.lang.ir import ir

CHILD_TIMEOUT_S = 300.0
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from verifier.chain.exo_child import main; del sys.path[0]; main()")


class ExoFailure(Exception):
    """exo-lang (or gcc) refused or failed; `where` is a (file, line) in user code if known."""

    def __init__(self, message: str, where: tuple[str, int] | None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where


def call(request: tuple[Any, ...], timeout_s: float = CHILD_TIMEOUT_S) -> tuple[Any, str]:
    """Run one request in a fresh exo-lang child; (reply value, what the child printed)."""
    root = str(Path(verifier.__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory() as tmp:
        reply_path = os.path.join(tmp, "reply.pickle")
        try:
            done = subprocess.run([sys.executable, "-P", "-c", _BOOT, root],
                                  input=pickle.dumps((reply_path, *request)),
                                  capture_output=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise ExoFailure(f"the exo-lang process did not finish within {timeout_s:g} s",
                             None) from None
        output = (done.stdout + done.stderr).decode("utf-8", errors="replace")
        if not os.path.exists(reply_path):
            raise ExoFailure(f"the exo-lang process ended (status {done.returncode}) without "
                             f"a reply: {output[-2000:]}", None)
        with open(reply_path, "rb") as f:
            reply = pickle.load(f)
    if reply[0] == "erased-rejected":
        raise ErasedRejected(reply[1], None)
    if reply[0] != "ok":
        raise ExoFailure(reply[1], reply[2])
    return reply[1], output


class ErasedRejected(ExoFailure):
    """exo-lang's frontend refused the erased kernel: a gap of the erasure, not user error."""


def load_reference(spec: str, base: Path | None = None,
                   erased: tuple[str, str] | None = None) -> ir.Proc:
    """`FILE.py:PROC` (FILE relative to `base`) read by exo-lang and converted to IR; with
    `erased` (module text, proc name) exo-lang must also accept the erased kernel (else
    ErasedRejected). A bad spec or a file exo-lang rejects is RejectedInput, located.
    Rules: CHAIN-8.2, CHAIN-1.6"""
    path_text, sep, name = spec.rpartition(":")
    if not sep or not path_text or not name:
        raise RejectedInput(f"--against expects FILE.py:PROC, got {spec!r}",
                            SrcLoc(spec, 0, 0), code="ERR-USAGE", rule="CHAIN-9.1")
    path = Path(path_text)
    if base is not None and not path.is_absolute():
        path = base / path
    if not path.is_file():
        raise RejectedInput(f"reference file {path} not found (name it as FILE.py:PROC)",
                            SrcLoc(str(path), 0, 0), code="ERR-USAGE", rule="CHAIN-9.1")
    try:
        proc, _ = call(("reference", str(path), name, erased))
    except ErasedRejected:
        raise
    except ExoFailure as e:
        raise RejectedInput(f"the reference {spec} cannot be read by exo-lang: {e.message}"
                            + (_FUTURE_HINT if "NameError" in e.message else ""),
                            _where(e, str(path)), code="ERR-USAGE", rule="CHAIN-8.2") from None
    return proc  # type: ignore[no-any-return]


_FUTURE_HINT = (" (an exo-lang file starts with `from __future__ import annotations`, so that "
                "`size`, `f32` and `seq` are read by exo-lang, not by Python)")
_EXO_LOC = re.compile(r"(?P<file>[^\s:]+\.py):(?P<line>\d+):(?P<col>\d+)")


def _where(e: ExoFailure, default_file: str) -> SrcLoc:
    """exo-lang's own `file:line:col` in its message, else the user frame that raised."""
    m = _EXO_LOC.search(e.message)
    if m:
        return SrcLoc(m["file"], int(m["line"]), int(m["col"]))
    file, line = e.where or (default_file, 1)
    return SrcLoc(file, line, 1)


def compile_to_c(items: list[tuple[str, str, str]]) -> dict[str, tuple[str, str]]:
    """exo-lang's (C source, header) for each (label, module source, proc name)."""
    out, _ = call(("compile", items))
    return out  # type: ignore[no-any-return]


def run_both(kernel_source: str, kernel_name: str, ref_spec: tuple[str, str],
             sizes: list[dict[str, int]], seed: int, low: int, high: int) -> list[dict]:
    """Both procs compiled by exo-lang and gcc, run at each sizes on the same inputs."""
    out, _ = call(("run", kernel_source, kernel_name, ref_spec[0], ref_spec[1], sizes, seed,
                   low, high))
    return out  # type: ignore[no-any-return]
