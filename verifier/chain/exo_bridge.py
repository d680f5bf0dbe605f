"""The parent's side of the exo-lang child (CHAIN-8): spawn it, send a request, read its reply.

This process never imports exo-lang: every use of it (reading the reference, compiling an
erased proc to C, running both procs) happens in `exo_child`, a fresh interpreter, so the `exo`
names spork-verify serves to kernel files and exo-lang's own package never meet.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import verifier
from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.lang import ir

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
    if reply[0] != "ok":
        raise ExoFailure(reply[1], reply[2])
    return reply[1], output


def load_reference(spec: str, base: Path | None = None) -> ir.Proc:
    """`FILE.py:PROC` (FILE relative to `base`) read by exo-lang and converted to IR.
    A bad spec or a file exo-lang rejects is RejectedInput, located. Rules: CHAIN-8.2"""
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
        proc, _ = call(("reference", str(path), name))
    except ExoFailure as e:
        file, line = e.where or (str(path), 1)
        raise RejectedInput(f"the reference {spec} cannot be read by exo-lang: {e.message}",
                            SrcLoc(file, line, 1), code="ERR-USAGE", rule="CHAIN-8.2") from None
    return proc  # type: ignore[no-any-return]


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
